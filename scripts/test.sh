#!/usr/bin/env bash
# The test command: sets up .venv from the project's own files when needed, then runs pytest.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# The runtime library (runtime/) and the toolkit, both editable. Compat mode puts their source
# directories on sys.path through a .pth file, which mypy and pyright follow (an import hook
# they cannot see is the default), as the typing tests of user code need.
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
  --config-settings editable_mode=compat -e ./runtime -e '.[test]'
# One worker per core (`-n 0` runs in this process); a hung test fails after 10 minutes instead of
# hanging CI.
exec .venv/bin/python -m pytest -n auto --timeout=600 "$@"
