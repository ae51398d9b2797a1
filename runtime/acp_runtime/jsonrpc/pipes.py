"""JSON-RPC 2.0 runtime, byte streams: pipe and file readers and writers for a ``Connection``.

Owns the stream adapters under a connection: ``_PipeReader`` (the read end of a pipe as an
asyncio protocol that hands its chunks straight to a connection's framing, with backpressure),
the blocking file reader and writer used when stdio is redirected to a regular file, the
openers that pick between them, and the cheap test of whether a writer must be drained.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import BinaryIO, cast

from .framing import ReaderLike, WriterLike
from .limits import READ_CHUNK

PIPE_READ_BYTES = 64 * 1024
"""The most asyncio's pipe and socket transports read at a time (``read_from_the_heap``)."""


def _drain_check(writer: WriterLike) -> Callable[[], bool]:
    """A cheap test of whether ``writer.drain()`` must be awaited after a write.

    An ``asyncio.StreamWriter`` only needs it once its transport buffer is above the high-water
    mark (that is when ``drain()`` would block) or when the transport is closing (``drain()``
    then reports the lost connection); a writer with a ``must_drain()`` method of its own (the
    remote transports' sinks) tells; anything else is always drained.
    """
    own: Callable[[], bool] | None = getattr(writer, "must_drain", None)
    if callable(own):
        return own
    transport = getattr(writer, "transport", None)
    # the transport duck-typed: uvloop's have these methods but are not asyncio's classes
    if not isinstance(writer, asyncio.StreamWriter) or not all(
        hasattr(transport, m)
        for m in ("get_write_buffer_limits", "get_write_buffer_size", "is_closing")
    ):
        return lambda: True
    transport = cast(asyncio.WriteTransport, transport)
    high = transport.get_write_buffer_limits()[1]
    size = transport.get_write_buffer_size
    closing = transport.is_closing

    def check() -> bool:
        return size() > high or closing()

    return check


def read_from_the_heap(transport: asyncio.BaseTransport) -> None:
    """Make asyncio's pipe or socket `transport` read at most `PIPE_READ_BYTES` at a time.

    asyncio reads `max_size` (256 KiB) bytes at a time: the allocator maps a buffer that big,
    shrinks it to what came and unmaps it, three system calls per read, which is per message
    when messages come one at a time (a third of a round trip's CPU over a pipe). A pipe holds
    64 KiB (Linux's default): reads of that size come from the heap and lose nothing. Other
    transports (uvloop's, TLS) have their own buffers and are left alone."""
    if type(getattr(transport, "max_size", None)) is int:
        setattr(transport, "max_size", PIPE_READ_BYTES)  # noqa: B010 (not in its type)


class _FileReader:
    """Blocking reads from a regular file (stdin redirected from a file), in a thread."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    async def read(self, n: int = -1) -> bytes:
        """Return up to ``n`` bytes, ``b""`` at end of file."""
        return await asyncio.to_thread(self._file.read, n)


class _FileWriter:
    """Blocking writes to a regular file (stdout redirected to a file)."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        """Write ``data``."""
        self._file.write(data)

    async def drain(self) -> None:
        """Flush the file."""
        self._file.flush()

    def close(self) -> None:
        """Flush the file (it is not ours to close)."""
        self._file.flush()


class _PipeReader(asyncio.Protocol):
    """The read end of a pipe as a protocol: a ``Connection`` takes its chunks as they arrive.

    Before ``attach`` (and for any other consumer) it is a plain ``ReaderLike``. Attached, every
    chunk goes straight from the transport's callback to the connection's framing, and reading
    pauses while the connection's own answers are backed up.
    """

    def __init__(self) -> None:
        self._transport: asyncio.ReadTransport | None = None
        self._buffer = bytearray()
        self._eof = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._sink: Callable[[bytes], None] | None = None
        self._backed_up: Callable[[], bool] = bool
        self._flow: Callable[[], Awaitable[None]] | None = None
        self._draining: asyncio.Task[None] | None = None

    # -- protocol callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport (to pause and resume reading)."""
        # Duck-typed: uvloop's pipe transports have the methods but are not ReadTransport's
        self._transport = cast(asyncio.ReadTransport, transport)
        read_from_the_heap(transport)

    def data_received(self, data: bytes) -> None:
        """Hand ``data`` to the attached connection, or buffer it for ``read``."""
        sink = self._sink
        if sink is not None:
            sink(data)
            if self._flow is not None and self._draining is None and self._backed_up():
                if self._transport is not None and not self._transport.is_closing():
                    self._transport.pause_reading()  # now: no further chunk until resumed
                self._draining = asyncio.ensure_future(self._drain(self._flow))
            return
        self._buffer += data
        if len(self._buffer) > READ_CHUNK and self._transport is not None:
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        """End of stream: wake the reader."""
        self._eof = True
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """The pipe is gone: treated as end of stream (an error is raised by ``read``)."""
        self._eof = True
        self._error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _drain(self, flow: Callable[[], Awaitable[None]]) -> None:
        # Reading stops until our answers are written out (backpressure on a peer that sends
        # requests without reading the answers).
        transport = self._transport
        try:
            await flow()
        except (ConnectionError, OSError):
            pass  # the output is lost: the connection is ending, it stops reading itself
        finally:
            self._draining = None
            if transport is not None and not transport.is_closing():
                transport.resume_reading()

    # -- consumers

    async def read(self, n: int = -1) -> bytes:
        """Return up to ``n`` bytes (all buffered if negative), ``b""`` at end of stream."""
        while not self._buffer and not self._eof:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if not self._buffer:
            if self._error is not None:
                raise self._error
            return b""
        size = len(self._buffer) if n < 0 else min(n, len(self._buffer))
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        if len(self._buffer) <= READ_CHUNK and self._transport is not None:
            self._transport.resume_reading()
        return data

    async def attach(
        self,
        sink: Callable[[bytes], None],
        backed_up: Callable[[], bool],
        flow: Callable[[], Awaitable[None]],
    ) -> None:
        """Feed every chunk to ``sink`` until end of stream.

        After a chunk, while ``backed_up()`` says the consumer cannot take more (its output is
        congested, or it holds input it could not handle yet), reading pauses until ``flow()``
        returns. Returns at end of stream; raises the pipe's error if it
        broke. Cancelling detaches.
        """
        if self._buffer:
            data = bytes(self._buffer)
            self._buffer.clear()
            sink(data)
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()
        self._sink = sink
        self._backed_up = backed_up
        self._flow = flow
        try:
            while not self._eof:
                self._waiter = asyncio.get_running_loop().create_future()
                try:
                    await self._waiter
                finally:
                    self._waiter = None
        finally:
            self._sink = None
            self._flow = None
            draining = self._draining
            if draining is not None and not draining.done():
                draining.cancel()
        if self._error is not None:
            raise self._error


async def open_pipe_reader(pipe: BinaryIO) -> ReaderLike:
    """An asyncio reader of `pipe`; a regular file (stdin redirected) is read in a thread."""
    loop = asyncio.get_running_loop()
    reader = _PipeReader()
    try:
        await loop.connect_read_pipe(lambda: reader, pipe)
    except ValueError:  # a regular file: not usable as a pipe transport
        return _FileReader(pipe)
    return reader


async def open_pipe_writer(pipe: BinaryIO) -> WriterLike:
    """An asyncio writer to `pipe`; a regular file (stdout redirected) is written directly."""
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), pipe
        )
    except ValueError:  # a regular file
        return _FileWriter(pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)
