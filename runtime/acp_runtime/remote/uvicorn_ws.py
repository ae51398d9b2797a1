"""Remote ACP transport, server side: uvicorn's WebSocket protocol, lighter and batching its writes.

Owns ``websocket_protocol``: a subclass of uvicorn's sans-I/O WebSocket protocol (``ws=
"websockets-sansio"``) that ``serve_remote`` runs. Two costs of the original, measured at 1,024
connections (docs/remote.md, "Measuring"):

- **a system call per frame.** ASGI sends one message per frame and uvicorn writes each at once: a
  third of our server's CPU under load. With ``batch``, ``websocket.send`` encodes the frame into
  the protocol's output and one callback per loop turn writes all the turn queued in one
  ``transport.write``, or at once when ``FLUSH_BYTES`` are waiting. Order holds (every other
  write of uvicorn's, pings, pongs, close, takes the protocol's whole output, queued frames
  first); at most ``FLUSH_BYTES`` wait unwritten, so the transport's buffer pauses sends as
  before (past its high-water mark a send waits) and a client that stops reading is cut off as
  before (sends wait, the output stall timer fires).
- **memory per connection.** uvicorn gives each WebSocket an ``asyncio.Queue`` (four deques, 3
  KiB) for the events it receives and an ``asyncio.Event`` (one deque) for "writable", and keeps
  the handshake response. ``Inbox`` and ``Flag`` hold a list and make their waiters only when a
  reader waits; the response is dropped once sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

FLUSH_BYTES = 64 * 1024  # asyncio's default high-water mark of a transport's write buffer


class Inbox:
    """A FIFO of received events for any number of waiting readers (uvicorn's ``queue``)."""

    __slots__ = ("_items", "_waiters")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._waiters: list[asyncio.Future[None]] | None = None  # made when a reader first waits

    def put_nowait(self, item: Any) -> None:
        """Queue ``item`` and wake the readers."""
        self._items.append(item)
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def empty(self) -> bool:
        """Whether nothing is queued."""
        return not self._items

    def qsize(self) -> int:
        """How many items are queued."""
        return len(self._items)

    async def get(self) -> Any:
        """The oldest item, once there is one."""
        while not self._items:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if self._waiters is None:
                self._waiters = []
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        return self._items.pop(0)


class Flag:
    """A set/clear flag that can be waited for (uvicorn's ``writable``), no deque of its own."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = True
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        """Whether the flag is set."""
        return self._set

    def set(self) -> None:
        """Set it and wake the waiters."""
        self._set = True
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def clear(self) -> None:
        """Clear it."""
        self._set = False

    async def wait(self) -> bool:
        """Return (True) once the flag is set."""
        while not self._set:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if self._waiters is None:
                self._waiters = []
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        return True


def websocket_protocol(batch: bool = True) -> type[asyncio.Protocol]:
    """Uvicorn's ``websockets-sansio`` protocol with ``Inbox`` and ``Flag``, the handshake
    response dropped once sent and, with ``batch``, the frames of one loop turn in one write."""
    from uvicorn.protocols.utils import ClientDisconnected
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.exceptions import InvalidState

    class ServerWebSocketProtocol(WebSocketsSansIOProtocol):
        """One WebSocket of ``serve_remote``."""

        _flush_due = False
        _pending = 0  # bytes of frames encoded and not yet written

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queue = Inbox()  # type: ignore[assignment]
            self.writable = Flag()  # type: ignore[assignment]

        async def send(self, message: Any) -> None:
            if (
                not batch
                or message["type"] != "websocket.send"
                or not self.handshake_complete
                or self.close_sent
                or self.initial_response is not None
            ):
                await super().send(message)  # its writes take the queued frames first
                if self.handshake_complete:
                    self.response = None  # type: ignore[assignment]
                return
            if not self.writable.is_set():
                await self.writable.wait()
            if self.disconnected:
                raise ClientDisconnected()
            data = message.get("bytes")
            if data is None:
                text = message.get("text")
                data = b"" if text is None else text.encode()
                kind = self.conn.send_text
            else:
                kind = self.conn.send_binary
            try:
                kind(data)
            except InvalidState:
                raise ClientDisconnected() from None
            self._pending += len(data)
            if self._pending >= FLUSH_BYTES:
                # Written now: past the transport's high-water mark it pauses, and the next send
                # waits (as uvicorn's does), so that a client that stops reading is noticed.
                self._flush()
            elif not self._flush_due:
                self._flush_due = True
                self.loop.call_soon(self._scheduled_flush)

        def _scheduled_flush(self) -> None:
            self._flush_due = False
            self._flush()

        def _flush(self) -> None:
            self._pending = 0
            output = self.conn.data_to_send()
            if output and not self.transport.is_closing():
                self.transport.write(b"".join(output))

    return ServerWebSocketProtocol
