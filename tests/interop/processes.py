"""Driving console processes in tests: reading a child's stdout up to a marker, with a deadline."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

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


def interrupt_after(
    argv: list[str],
    marker: bytes,
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> tuple[int, str, str]:
    """Run `argv`, send SIGINT once `marker` is on its stdout; its exit status, stdout and stderr."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        seen = read_until(process, marker, timeout)
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=timeout)
    finally:
        process.kill()
    return process.returncode, (seen + rest).decode(), errors.decode()
