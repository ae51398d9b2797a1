"""Remote ACP transport: the queue-backed byte pipes between a transport and a ``Connection``.

Owns ``InboundPipe`` (a ``ReaderLike`` fed whole frames by the HTTP or WebSocket side) and
``Mailbox`` (the frames waiting for one receiver: an SSE stream or a WebSocket), both counting
their bytes so that the connection can hold its limits, ``ByteBound`` (the client side's wait
while too much is queued) and ``QueuedSink`` (the base of the clients' writers). No I/O of their
own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class InboundPipe:
    """Frames from the client, read by a ``Connection`` as a byte stream (``ReaderLike``)."""

    __slots__ = (
        "_frames",
        "_waiter",
        "_eof",
        "_on_progress",
        "_on_change",
        "buffered",
    )

    def __init__(
        self, on_progress: Callable[[], None], on_change: Callable[[int], None] | None = None
    ) -> None:
        self._frames: list[bytes] = []  # not a deque: an idle one holds no 600-byte block
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._on_progress = on_progress
        self._on_change = on_change  # called with the change in queued bytes (a server budget)
        self.buffered = 0

    def feed(self, frame: bytes) -> None:
        """Queue one newline-terminated frame."""
        if self._eof:
            raise ConnectionError("connection closed")
        self._frames.append(frame)
        self.buffered += len(frame)
        if self._on_change is not None:
            self._on_change(len(frame))
        self._wake()

    def feed_eof(self) -> None:
        """End the stream: ``read`` returns what is queued, then ``b""``."""
        self._eof = True
        self._wake()

    def discard(self) -> None:
        """End the stream and drop what is queued (the connection is gone)."""
        dropped, self.buffered = self.buffered, 0
        self._frames.clear()
        if dropped and self._on_change is not None:
            self._on_change(-dropped)
        self.feed_eof()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read(self, n: int = -1) -> bytes:
        """Return the queued frames (about ``n`` bytes at most, one frame at least)."""
        while not self._frames:
            if self._eof:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        frames = self._frames
        chunk = frames[0]
        count, size = 1, len(chunk)
        while count < len(frames) and (n < 0 or size + len(frames[count]) <= n):
            size += len(frames[count])
            count += 1
        if count > 1:
            chunk = b"".join(frames[:count])
        del frames[:count]
        self.buffered -= len(chunk)
        if self._on_change is not None:
            self._on_change(-len(chunk))
        self._on_progress()
        return chunk


class Mailbox:
    """Frames waiting for one receiver; their bytes count against the connection's buffer."""

    __slots__ = (
        "frames",
        "has_receiver",
        "closed",
        "_waiter",
        "_on_change",
    )

    def __init__(self, on_change: Callable[[int], None]) -> None:
        self.frames: list[bytes] = []  # not a deque: an idle one holds no 600-byte block
        self.has_receiver = False
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._on_change = on_change  # called with the change in queued bytes

    def push(self, frame: bytes) -> None:
        """Queue one frame for the receiver (dropped once closed)."""
        if self.closed:
            return
        self.frames.append(frame)
        self._on_change(len(frame))
        self.wake()

    def wake(self) -> None:
        """Wake a receiver waiting in ``take``."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """Drop what is queued and end the receiver's stream."""
        if self.closed:
            return
        self.closed = True
        dropped = sum(len(frame) for frame in self.frames)
        self.frames.clear()
        if dropped:
            self._on_change(-dropped)
        self.wake()

    async def take(
        self, timeout: float | None = None, max_bytes: int | None = None
    ) -> list[bytes] | None:
        """The queued frames ([] when ``timeout`` passed first), or None once closed.

        With ``max_bytes``, only the first frames up to that size (one at least): the rest stays
        queued, and counted, until the receiver has sent these."""
        if not self.frames and not self.closed:
            self._waiter = waiter = asyncio.get_running_loop().create_future()
            try:
                if timeout is None:  # no timer to make (a WebSocket's pump waits so per batch)
                    await waiter
                else:
                    async with asyncio.timeout(timeout):
                        await waiter
            except TimeoutError:
                return []
            finally:
                self._waiter = None
        if self.closed:
            return None
        queued = self.frames
        if max_bytes is None or not queued:
            frames, self.frames = queued, []
            size = sum(len(frame) for frame in frames)
        else:
            count, size = 1, len(queued[0])
            while count < len(queued) and size + len(queued[count]) <= max_bytes:
                size += len(queued[count])
                count += 1
            if count == len(queued):
                frames, self.frames = queued, []
            else:
                frames = queued[:count]
                del queued[:count]
        self._on_change(-size)
        return frames


class ByteBound:
    """Waits while more than ``limit`` bytes are queued; a stall past ``timeout`` is an error."""

    def __init__(self, limit: int, timeout: float) -> None:
        self.limit = limit
        self.timeout = timeout
        self.queued = 0
        self._event = asyncio.Event()

    def progress(self) -> None:
        """Wake a waiter: something was taken."""
        self._event.set()

    async def wait(self, current: Callable[[], int]) -> None:
        """Return once ``current()`` is within the limit; ``ConnectionError`` after a stall."""
        while current() > self.limit:
            self._event.clear()
            try:
                async with asyncio.timeout(self.timeout):
                    await self._event.wait()
            except TimeoutError:
                raise ConnectionError("remote peer stopped reading") from None


class QueuedSink:
    """A client transport's ``WriterLike``: frames queued, sent in order by one task.

    Subclasses implement ``_send_all``, taking frames with ``_next`` (None: closed)."""

    bounds_stalls = True  # `drain` raises ConnectionError once the bound's timeout passes

    def __init__(self, bound: ByteBound) -> None:
        self._bound = bound
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._sender = asyncio.ensure_future(self._send_all())
        self.connection_id: str | None = None

    def write(self, data: bytes) -> None:
        """Queue frames for sending."""
        if self._sender.done():
            raise ConnectionError("remote connection closed")
        self._bound.queued += len(data)
        self._queue.put_nowait(data)

    async def drain(self) -> None:
        """Wait while too much is queued."""
        await self._bound.wait(lambda: self._bound.queued)

    def close(self) -> None:
        """Send what is queued, then end the connection (see ``wait_closed``)."""
        self._queue.put_nowait(None)

    async def _next(self) -> bytes | None:
        data = await self._queue.get()
        if data is not None:
            self._bound.queued -= len(data)
            self._bound.progress()
        return data

    async def _send_all(self) -> None:
        raise NotImplementedError
