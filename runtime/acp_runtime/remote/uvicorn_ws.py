"""Remote ACP transport, server side: uvicorn's WebSocket protocol, lighter and batching its writes.

Owns ``websocket_protocol``: a subclass of uvicorn's sans-I/O WebSocket protocol (``ws=
"websockets-sansio"``) that ``serve_remote`` runs; uvicorn's command line takes it as
``--ws acp_runtime.remote.uvicorn_ws:WebSocketProtocol`` (made on first access: this module
imports no uvicorn itself). Two costs of the original, measured at 1,024
connections (docs/remote.md, "Measuring"):

- **a system call per frame.** ASGI sends one message per frame and uvicorn writes each at once: a
  third of our server's CPU under load. Here a send encodes its frames with websockets' encoder,
  as uvicorn's does (``conn.send_text``, then ``conn.data_to_send()``), into a list that one
  callback per loop turn writes in one ``transport.write``, or at once when ``FLUSH_BYTES`` are
  waiting. The ``SEND_MANY`` extension takes a batch of frames in one send (one await, no ``str``
  per frame). Data frames keep their order; uvicorn's pings and pongs may go between two of them
  (as the RFC allows); the app's close goes after those queued; after the peer's close, or a
  keep-alive timeout, those queued are dropped. At most ``FLUSH_BYTES`` wait unwritten, so the
  transport's buffer pauses sends as before (past its high-water mark a send waits) and a client
  that stops reading is cut off as before (sends wait, the output stall timer fires).
- **memory per connection.** uvicorn gives each WebSocket an ``asyncio.Queue`` (four deques, 3
  KiB) for the events it receives and an ``asyncio.Event`` (one deque) for "writable", and keeps
  the handshake response. ``Inbox`` and ``Flag`` hold a list and make their waiters only when a
  reader waits; the response is dropped once sent.

The subclass builds on attributes of uvicorn's class that are not its public interface
(``USES_ATTRIBUTES``, ``USES_METHODS``): ``websocket_protocol`` checks that uvicorn's class still
sets and defines them, and returns uvicorn's own class otherwise (a future uvicorn), with one
warning naming its version.
"""

from __future__ import annotations

import asyncio
import dis
import logging
from collections.abc import Callable
from typing import Any

FLUSH_BYTES = 64 * 1024  # asyncio's default high-water mark of a transport's write buffer
SEND_MANY = "acp.websocket.send_many"
"""The ASGI extension (in ``scope["extensions"]``) and message type ``{"type": SEND_MANY,
"texts": [...]}``: several text frames in one send, each a bytes-like of valid UTF-8 (the app
checks), instead of one ``websocket.send`` (and one ``str``) per frame."""
USES_ATTRIBUTES = tuple(
    "conn writable queue close_sent initial_response handshake_complete scope response transport"
    " loop disconnected".split()
)
"""The attributes of uvicorn's ``WebSocketsSansIOProtocol`` the subclass reads or replaces, which
uvicorn's methods set (checked with uvicorn 0.52.1 and 0.55.0)."""
USES_METHODS = tuple(
    "send receive handle_connect pause_writing resume_writing connection_lost".split()
)
"""Its methods the subclass calls or relies on (``pause_writing`` clears ``writable``...)."""

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote


class _Waiters:
    """The readers waiting for something, made when the first one waits (no deque each)."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] | None = None

    def _wake(self) -> None:
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def _wait_until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if self._waiters is None:
                self._waiters = []
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)


class Inbox(_Waiters):
    """A FIFO of received events for any number of waiting readers (uvicorn's ``queue``)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        super().__init__()
        self._items: list[Any] = []

    def put_nowait(self, item: Any) -> None:
        """Queue ``item`` and wake the readers."""
        self._items.append(item)
        self._wake()

    def empty(self) -> bool:
        """Whether nothing is queued."""
        return not self._items

    def qsize(self) -> int:
        """How many items are queued."""
        return len(self._items)

    async def get(self) -> Any:
        """The oldest item, once there is one."""
        if not self._items:
            await self._wait_until(lambda: bool(self._items))
        return self._items.pop(0)


class Flag(_Waiters):
    """A set/clear flag that can be waited for (uvicorn's ``writable``), no deque of its own."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        super().__init__()
        self._set = True

    def is_set(self) -> bool:
        """Whether the flag is set."""
        return self._set

    def set(self) -> None:
        """Set it and wake the waiters."""
        self._set = True
        self._wake()

    def clear(self) -> None:
        """Clear it."""
        self._set = False

    async def wait(self) -> bool:
        """Return (True) once the flag is set."""
        await self._wait_until(self.is_set)
        return True


_made: dict[str, type[asyncio.Protocol]] = {}


def websocket_protocol() -> type[asyncio.Protocol]:
    """The WebSocket protocol ``serve_remote`` gives uvicorn, made once: uvicorn's
    ``websockets-sansio`` with ``Inbox`` and ``Flag``, the handshake response dropped once sent,
    the frames of one loop turn in one write and the ``SEND_MANY`` extension. Uvicorn's own class,
    with one warning, when it lacks what the subclass builds on (``missing_from``)."""
    made = _made.get("WebSocketProtocol")
    if made is None:
        made = _made["WebSocketProtocol"] = _make_protocol()
    return made


def missing_from(base: type) -> list[str]:
    """The names of ``USES_ATTRIBUTES`` that ``base`` (uvicorn's class) does not set, then those
    of ``USES_METHODS`` it does not define."""
    defined: set[str] = set()
    assigned: set[str] = set()
    for klass in base.__mro__:
        if klass is object or klass.__module__.startswith("asyncio"):
            break  # asyncio.Protocol's do-nothing methods are not uvicorn's
        for name, value in vars(klass).items():
            defined.add(name)
            code = getattr(value, "__code__", None)
            if code is not None:  # ``self.name = ...`` anywhere in the method
                assigned.update(
                    str(op.argval) for op in dis.get_instructions(code) if op.opname == "STORE_ATTR"
                )
    return [
        *(name for name in USES_ATTRIBUTES if name not in assigned),
        *(name for name in USES_METHODS if name not in defined),
    ]


def _make_protocol() -> type[asyncio.Protocol]:
    import uvicorn
    from uvicorn.protocols.utils import ClientDisconnected
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.exceptions import InvalidState
    from websockets.protocol import OPEN

    missing = missing_from(WebSocketsSansIOProtocol)
    if missing:
        logger.warning(
            "uvicorn %s's WebSocketsSansIOProtocol lacks %s, which acp_runtime's WebSocket "
            "protocol builds on: serving WebSockets with uvicorn's own 'websockets-sansio' (one "
            "write per frame, more memory per connection)",
            uvicorn.__version__,
            ", ".join(missing),
        )
        return WebSocketsSansIOProtocol

    class ServerWebSocketProtocol(WebSocketsSansIOProtocol):
        """One WebSocket of ``serve_remote``."""

        _flush_due = False
        _pending = 0  # bytes encoded and not yet written
        _out: list[bytes] | None = None  # those frames, made when the first is

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queue = Inbox()  # type: ignore[assignment]
            self.writable = Flag()  # type: ignore[assignment]

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)  # none when the handshake was refused
            if scope is not None:
                scope["extensions"][SEND_MANY] = {}  # before the app's task first runs

        async def send(self, message: Any) -> None:
            kind = message["type"]
            if (
                (kind != "websocket.send" and kind != SEND_MANY)
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
            conn = self.conn
            try:  # websockets encodes each whole frame (FIN set), as under uvicorn's own send
                if kind == SEND_MANY:
                    for text in message["texts"]:
                        conn.send_text(text)
                elif message.get("bytes") is not None:
                    conn.send_binary(message["bytes"])
                else:
                    conn.send_text((message.get("text") or "").encode())
            except InvalidState:
                raise ClientDisconnected() from None  # what uvicorn raises once the close began
            frames = conn.data_to_send()
            out = self._out
            if out is None:
                self._out = frames
            else:
                out.extend(frames)
            self._pending += sum(map(len, frames))
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
            out = self._out
            if not out:
                return
            self._out = None
            # After a close (the peer's, answered by uvicorn, or a failed keep-alive) no data
            # frame may follow: those still queued are dropped, as the client is gone.
            if self.conn.state is OPEN and not self.transport.is_closing():
                self.transport.write(b"".join(out))

    return ServerWebSocketProtocol


def __getattr__(name: str) -> type[asyncio.Protocol]:
    """``WebSocketProtocol``: ``websocket_protocol()``, for ``uvicorn --ws``."""
    if name != "WebSocketProtocol":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return websocket_protocol()
