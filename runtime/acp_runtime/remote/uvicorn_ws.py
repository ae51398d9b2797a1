"""Remote ACP transport, server side: uvicorn's WebSocket protocol, lighter and batching its writes.

Owns ``websocket_protocol``: a subclass of uvicorn's sans-I/O WebSocket protocol (``ws=
"websockets-sansio"``) that ``serve_remote`` runs; uvicorn's command line takes it as
``--ws acp_runtime.remote.uvicorn_ws:WebSocketProtocol`` (made on first access: this module
imports no uvicorn itself). Two costs of the original, measured at 1,024
connections (docs/remote.md, "Measuring"):

- **a system call per frame.** ASGI sends one message per frame and uvicorn writes each at once: a
  third of our server's CPU under load. With ``batch``, a send encodes its frames (a header of 2
  to 10 bytes; websockets' encoder when permessage-deflate is on) into a list that one callback
  per loop turn writes in one ``transport.write``, or at once when ``FLUSH_BYTES`` are waiting.
  The ``SEND_MANY`` extension takes a batch of frames in one send (one await, no ``str`` per
  frame). Data frames keep their order; uvicorn's pings and pongs may go between two of them
  (as the RFC allows); the app's close goes after those queued; after the peer's close, or a
  keep-alive timeout, those queued are dropped. At most ``FLUSH_BYTES`` wait unwritten, so the
  transport's buffer pauses sends as before (past its high-water mark a send waits) and a client
  that stops reading is cut off as before (sends wait, the output stall timer fires).
- **memory per connection.** uvicorn gives each WebSocket an ``asyncio.Queue`` (four deques, 3
  KiB) for the events it receives and an ``asyncio.Event`` (one deque) for "writable", and keeps
  the handshake response. ``Inbox`` and ``Flag`` hold a list and make their waiters only when a
  reader waits; the response is dropped once sent.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

FLUSH_BYTES = 64 * 1024  # asyncio's default high-water mark of a transport's write buffer
SEND_MANY = "acp.websocket.send_many"
"""The ASGI extension (in ``scope["extensions"]``) and message type ``{"type": SEND_MANY,
"texts": [...]}``: several text frames in one send, each a bytes-like of valid UTF-8 (the app
checks), instead of one ``websocket.send`` (and one ``str``) per frame."""
_HEADER_16 = struct.Struct("!BBH").pack
_HEADER_64 = struct.Struct("!BBQ").pack


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


def frame_header(first_byte: int, size: int) -> bytes:
    """The header of an unmasked WebSocket frame (a server's) of ``size`` payload bytes."""
    if size < 126:
        return bytes((first_byte, size))
    if size < 65536:
        return _HEADER_16(first_byte, 126, size)
    return _HEADER_64(first_byte, 127, size)


def websocket_protocol(batch: bool = True) -> type[asyncio.Protocol]:
    """Uvicorn's ``websockets-sansio`` protocol with ``Inbox`` and ``Flag``, the handshake
    response dropped once sent and, with ``batch``, the frames of one loop turn in one write and
    the ``SEND_MANY`` extension."""
    from uvicorn.protocols.utils import ClientDisconnected
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.protocol import OPEN

    class ServerWebSocketProtocol(WebSocketsSansIOProtocol):
        """One WebSocket of ``serve_remote``."""

        _flush_due = False
        _pending = 0  # payload bytes encoded and not yet written
        _out: list[bytes | memoryview] | None = None  # those frames, made when the first is

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queue = Inbox()  # type: ignore[assignment]
            self.writable = Flag()  # type: ignore[assignment]

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)  # none when the handshake was refused
            if batch and scope is not None:
                scope["extensions"][SEND_MANY] = {}  # before the app's task first runs

        async def send(self, message: Any) -> None:
            kind = message["type"]
            if (
                not batch
                or (kind != "websocket.send" and kind != SEND_MANY)
                or not self.handshake_complete
                or self.close_sent
                or self.initial_response is not None
            ):
                self._flush()  # the frames queued go before whatever this sends (a close)
                await super().send(message)
                if self.handshake_complete:
                    self.response = None  # type: ignore[assignment]
                return
            if not self.writable.is_set():
                await self.writable.wait()
            if self.disconnected:
                raise ClientDisconnected()
            if kind == SEND_MANY:
                for text in message["texts"]:
                    self._queue(0x81, text)
            elif message.get("bytes") is not None:
                self._queue(0x82, message["bytes"])
            else:
                self._queue(0x81, (message.get("text") or "").encode())
            if self._pending >= FLUSH_BYTES:
                # Written now: past the transport's high-water mark it pauses, and the next send
                # waits (as uvicorn's does), so that a client that stops reading is noticed.
                self._flush()
            elif not self._flush_due:
                self._flush_due = True
                self.loop.call_soon(self._scheduled_flush)

        def _queue(self, first_byte: int, payload: bytes | memoryview) -> None:
            """Encode one whole frame (FIN set; 0x81 text, 0x82 binary) for the next write."""
            conn = self.conn
            if conn.state is not OPEN:
                raise ClientDisconnected()  # what uvicorn raises once the close began
            out = self._out
            if out is None:
                out = self._out = []
            if conn.extensions:  # permessage-deflate (``ws_deflate``): websockets encodes
                if first_byte == 0x81:
                    conn.send_text(bytes(payload))
                else:
                    conn.send_binary(bytes(payload))
                out.extend(conn.data_to_send())
            else:
                out.append(frame_header(first_byte, len(payload)))
                out.append(payload)
            self._pending += len(payload)

        def _scheduled_flush(self) -> None:
            self._flush_due = False
            self._flush()

        def _flush(self) -> None:
            self._pending = 0
            out = self._out
            if not out:
                return
            self._out = None
            # After a close (the peer's, answered by uvicorn, or a failed keep-alive) no data
            # frame may follow: those still queued are dropped, as the client is gone.
            if self.conn.state is OPEN and not self.transport.is_closing():
                self.transport.write(b"".join(out))

    return ServerWebSocketProtocol


_made: dict[str, type[asyncio.Protocol]] = {}


def __getattr__(name: str) -> type[asyncio.Protocol]:
    """``WebSocketProtocol``: ``websocket_protocol()``, made once, for ``uvicorn --ws``."""
    if name != "WebSocketProtocol":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _made:
        _made[name] = websocket_protocol()
    return _made[name]
