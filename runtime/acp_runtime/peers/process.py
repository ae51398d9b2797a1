"""Context-managed lifetimes of ACP peers: `agent_process` (spawn an agent, connect, and on exit
close its stdin, wait, SIGTERM, wait, SIGKILL), `StderrTail` (the child's stderr captured without
ever blocking it) and `Serving` (a connection over this process's stdio, awaited to the end or
used as a block). Depends on the standard library and the runtime's public `Connection` API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Generator,
    Mapping,
    Sequence,
)
from os import PathLike
from types import TracebackType
from typing import IO, Any, Generic, TypeVar, Unpack

from ..jsonrpc import Connection, ConnectionOptions, MethodSpec, spawn

logger = logging.getLogger(__name__)

P = TypeVar("P")

# What `stderr=` takes: None (inherited), `subprocess.PIPE` (captured into a `StderrTail`), a
# callable (called with each line, also captured), or a file / file descriptor / DEVNULL.
StderrOption = int | IO[Any] | Callable[[bytes], None] | None

DEFAULT_GRACE = 5.0  # seconds to wait after closing stdin, and again after SIGTERM
TAIL_BYTES = 64 * 1024  # how much of the child's stderr a `StderrTail` keeps
_LINE_BYTES = 64 * 1024  # longest stderr line handed to a callback (the rest is cut)


class StderrTail:
    """The last `limit` bytes of a child's stderr, read as fast as it writes (so never blocking
    it); each line also goes to `on_line` when given."""

    def __init__(
        self, limit: int = TAIL_BYTES, on_line: Callable[[bytes], None] | None = None
    ) -> None:
        self.limit = limit
        self.on_line = on_line
        self.total = 0  # bytes read so far
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        """Take one chunk read from the pipe."""
        self.total += len(chunk)
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) >= self.limit:
            self._size -= len(self._chunks.popleft())
        if self.on_line is not None:
            data = self._partial + chunk
            *lines, rest = data.split(b"\n")
            for line in lines:
                self._line(line)
            self._partial = rest[-_LINE_BYTES:]

    def _line(self, line: bytes) -> None:
        assert self.on_line is not None
        try:
            self.on_line(line[:_LINE_BYTES])
        except Exception:
            logger.exception("stderr callback failed")

    def close(self) -> None:
        """The pipe reached EOF: hand over a last line without a newline."""
        if self.on_line is not None and self._partial:
            self._line(self._partial)
        self._partial = b""

    def bytes(self) -> bytes:
        """The captured tail."""
        data = b"".join(self._chunks)
        return data[-self.limit :]

    def text(self) -> str:
        """The captured tail as text (undecodable bytes replaced)."""
        return self.bytes().decode("utf-8", "replace")


async def _pump(stream: asyncio.StreamReader, tail: StderrTail) -> None:
    try:
        while chunk := await stream.read(65536):
            tail.feed(chunk)
    finally:
        tail.close()


async def stop_process(process: asyncio.subprocess.Process, grace: float) -> int:
    """Wait `grace` seconds for the process to exit, then SIGTERM, wait again, then SIGKILL."""
    for signal in (None, process.terminate, process.kill):
        if signal is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal()
        try:
            async with asyncio.timeout(grace if signal is not process.kill else None):
                return await process.wait()
        except TimeoutError:
            continue
    return await process.wait()  # pragma: no cover


@contextlib.asynccontextmanager
async def agent_process(
    command: Sequence[str],
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    cwd: str | PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: StderrOption = None,
    grace: float = DEFAULT_GRACE,
    **options: Unpack[ConnectionOptions],
) -> AsyncIterator[tuple[Connection, asyncio.subprocess.Process, StderrTail | None]]:
    """Spawn `command`, connect `handler` to it and run the connection for the block; on exit
    close the connection (EOF on the child's stdin) and stop the child (`stop_process`)."""
    if not command:
        raise ValueError("command must not be empty")
    if stderr == subprocess.STDOUT:
        raise ValueError("stderr=STDOUT would mix logs into the protocol stream")
    tail: StderrTail | None = None
    pump: asyncio.Task[None] | None = None
    if stderr is None:  # inherited: the runtime's own spawn
        connection, process = await spawn(command, handler, inbound, env=env, cwd=cwd, **options)
    else:
        capture = stderr == subprocess.PIPE or callable(stderr)
        process = await asyncio.create_subprocess_exec(
            command[0],
            *command[1:],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if capture else stderr,  # type: ignore[arg-type]
            cwd=cwd,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        connection = Connection(handler, inbound, process.stdout, process.stdin, **options)
        if capture:
            assert process.stderr is not None
            tail = StderrTail(on_line=stderr if callable(stderr) else None)
            pump = asyncio.create_task(_pump(process.stderr, tail))
    running = asyncio.create_task(connection.run())
    try:
        yield connection, process, tail
    finally:
        await connection.close()
        await stop_process(process, grace)
        await asyncio.wait([running])
        if pump is not None:
            # a grandchild may still hold the pipe open: give it a moment, then stop reading
            done, _ = await asyncio.wait([pump], timeout=1.0)
            if not done:
                pump.cancel()
                await asyncio.wait([pump])


class Serving(Coroutine[Any, Any, None], Generic[P]):
    """A connection over this process's stdio: `await` it (or `asyncio.run` it) to serve until
    the peer hangs up, or `async with` it for a block (it yields the typed peer and closes the
    connection on exit)."""

    def __init__(
        self, connect: Callable[[], Awaitable[Connection]], attach: Callable[[Connection], P]
    ) -> None:
        self._connect = connect
        self._attach = attach
        self._connection: Connection | None = None
        self._running: asyncio.Task[None] | None = None
        self._inner: Coroutine[Any, Any, None] | None = None

    def _coroutine(self) -> Coroutine[Any, Any, None]:
        if self._inner is None:
            self._inner = self._serve()
        return self._inner

    def __await__(self) -> Generator[Any, None, None]:
        return self._coroutine().__await__()

    def send(self, value: Any) -> Any:
        """Coroutine protocol (so `asyncio.run(serve_agent(agent))` works)."""
        return self._coroutine().send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        """Coroutine protocol."""
        return self._coroutine().throw(typ, val, tb)

    def close(self) -> None:
        """Coroutine protocol: close the serving coroutine if it was started."""
        if self._inner is not None:
            self._inner.close()

    async def _serve(self) -> None:
        connection = await self._connect()
        self._attach(connection)
        await connection.run()

    async def __aenter__(self) -> P:
        self._connection = await self._connect()
        peer = self._attach(self._connection)
        self._running = asyncio.create_task(self._connection.run())
        return peer

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._connection is not None and self._running is not None
        await self._connection.close()
        await asyncio.wait([self._running])
