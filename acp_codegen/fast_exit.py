"""Ending the CLI's process without tearing down its heap.

A `generate` leaves hundreds of thousands of objects (the IR, DMCG's and Jinja's trees, the
rendered text). A normal interpreter exit frees each of them and runs a last full garbage
collection: about a quarter of a second, a tenth of a cold `generate`, for memory the operating
system takes back at once anyway. So the CLI ends as mypy's does: it flushes its output, runs
the `atexit` callbacks (temporary directories, `weakref.finalize`), then `os._exit`s with the
status the command set.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable


def run_and_exit(command: Callable[[], object]) -> None:
    """Run `command` (a CLI entry that may raise SystemExit), then end the process at once with
    its exit status; never returns."""
    try:
        command()
        status: object = 0
    except SystemExit as done:
        status = done.code
    os._exit(_finish(status))


def _finish(status: object) -> int:
    """What `sys.exit(status)` would print and return, with the output flushed and `atexit` run."""
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:
        print(status, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more can be said
            code = code or 1
    return code
