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
# (Byte-compiling at install stays: without it the suite's many subprocesses compiled their
# imports again and again, 567 s instead of 445 s.)
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
  --config-settings editable_mode=compat -e ./runtime -e '.[test]'
# Two workers more than there are CPUs (`-n 0` runs in this process): the tests wait on
# subprocesses and sockets for a good part of their time, which more workers fill (2 CPUs: 472 s
# with 2 workers, 445-457 s with 3 at 183 % CPU). A hung test fails after 10 minutes instead of
# hanging CI.
WORKERS=$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 2 ))
exec .venv/bin/python -m pytest -n "$WORKERS" --timeout=600 "$@"
