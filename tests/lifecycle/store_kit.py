"""The history stores under contract test, made the same way by the tests and by the writer
process they kill: `memory`, `sqlite` (a file), `redis` (a private redis-server this kit starts,
with the durable configuration docs/remote.md recommends). A store is named by a spec string
(`sqlite:PATH`, `redis:URL|PREFIX`) that a child process can open again."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp_runtime.lifecycle import MemoryHistory, SqliteHistory

KINDS = ["memory", "sqlite", "redis"]
DURABLE = ["sqlite", "redis"]  # the memory store is lost with its process by design


def redis_missing() -> str | None:
    """Why the Redis store cannot be tested here, or None."""
    if shutil.which("redis-server") is None:
        return "no redis-server on PATH (Debian: apt-get install redis-server; nox -s stores)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis client is not installed (pip install 'acp-runtime[redis]')"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """A redis-server of the test's own on a free port, its data (append-only file) in `home`."""

    def __init__(self, home: Path, fsync: str = "always") -> None:
        self.home = home
        self.fsync = fsync  # `appendfsync`: always (every acknowledged write synced), everysec
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.home),
                "--appendonly",
                "yes",
                "--appendfsync",
                self.fsync,
                "--save",
                "",
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port)) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
            assert self.process.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not answer"
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def redis_server(home: Path) -> Iterator[RedisServer]:
    server = RedisServer(home)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def open_store(spec: str) -> Any:
    """The store a spec names (`memory`, `sqlite:PATH`, `redis:URL|PREFIX`)."""
    kind, _, where = spec.partition(":")
    if kind == "memory":
        return MemoryHistory()
    if kind == "sqlite":
        return SqliteHistory(where)
    from acp_runtime.lifecycle import RedisHistory

    url, _, prefix = where.partition("|")
    return RedisHistory(url, prefix=prefix)


async def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        await close()
