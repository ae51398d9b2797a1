"""Support for the hostile-peer tests: our server in a subprocess, raw sockets, its memory.

`ServerProcess` runs tests/remote/hostile_server.py (`serve_remote` as an operator runs it, under
uvicorn or hypercorn) on a free port of 127.0.0.1 and ends it at the end of the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent / "hostile_server.py"
START_TIMEOUT = 20.0
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}},
}


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """The subprocess and where it listens."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, stderr: Path) -> None:
        self.process, self.port, self.stderr_path = process, port, stderr
        self.base = f"127.0.0.1:{port}"

    def rss_mib(self) -> float:
        """The server's resident memory now, in MiB (Linux /proc)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def open_fds(self) -> int:
        """How many files the server has open (Linux /proc)."""
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def log(self) -> str:
        """What the server wrote to stderr so far."""
        return self.stderr_path.read_text(errors="replace")


@contextlib.asynccontextmanager
async def server_process(
    tmp_path: Path,
    agent: str = "echo",
    *,
    http2: bool = False,
    limits: dict[str, Any] | None = None,
    preexec: Sequence[str] = (),
) -> AsyncIterator[ServerProcess]:
    """Run the server until the block ends (then SIGKILL if it still runs)."""
    port = free_port()
    command = [sys.executable, str(SCRIPT), str(port), agent, "--limits", json.dumps(limits or {})]
    if http2:
        command.append("--http2")
    if preexec:
        command = ["sh", "-c", f'{" ".join(preexec)}; exec "$0" "$@"', *command]
    stderr = tmp_path / f"server-{port}.log"
    with stderr.open("wb") as sink:
        process = await asyncio.to_thread(
            subprocess.Popen, command, stdout=subprocess.DEVNULL, stderr=sink
        )
    server = ServerProcess(process, port, stderr)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited {process.returncode}: {server.log()}")
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not start: {server.log()}")
            await asyncio.sleep(0.05)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(10)


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closes this socket within `seconds` (whatever it sends first)."""
    try:
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass
        return True
    except TimeoutError:
        return False
    except OSError:
        return True


async def http_request(
    base: str, method: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request on a fresh socket: status, headers, body (read to the close)."""
    host, port = base.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = f"{method} /acp HTTP/1.1\r\nHost: {base}\r\nConnection: close\r\n"
    for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
        head += f"{name}: {value}\r\n"
    writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    data = await reader.read(-1)
    writer.close()
    status_line, _, rest = data.partition(b"\r\n")
    raw_headers, _, payload = rest.partition(b"\r\n\r\n")
    parsed = {}
    for line in raw_headers.split(b"\r\n"):
        name, _, value = line.decode("latin-1").partition(":")
        parsed[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), parsed, payload
