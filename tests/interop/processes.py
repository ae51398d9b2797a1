"""Driving console processes in tests: reading a child's stdout up to a marker, with a deadline."""

from __future__ import annotations

import os
import select
import subprocess
import time

TIMEOUT = 120.0  # a guard against a hang, never an assertion about speed


def read_until(process: subprocess.Popen[bytes], marker: bytes, timeout: float = TIMEOUT) -> bytes:
    """A process's stdout up to (and including the chunk with) `marker`."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(process.stdout.fileno(), 4096) if ready else b""
        if not chunk:
            raise AssertionError(f"{marker!r} never came; got {seen!r}")
        seen += chunk
    return seen
