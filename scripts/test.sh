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
# One worker per core (`-n 0` runs in this process); a hung test fails after 10 minutes instead of
# hanging CI.
exec .venv/bin/python -m pytest -n auto --timeout=600 "$@"
