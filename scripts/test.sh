#!/usr/bin/env bash
# The test command: sets up .venv from the project's own files when needed, then runs pytest.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
