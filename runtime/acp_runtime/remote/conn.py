"""Remote ACP transport, server side: one client connection's state, and the registry of them.

Owns ``RemoteConnection``: the agent it drives (a ``Connection`` over an ``InboundPipe`` and the
connection itself as the ``WriterLike``), the routing of the agent's output to the
connection-scoped stream or to the session stream of the message's ``sessionId`` (HTTP) or to
the one WebSocket, the sessions the connection holds, and the limits (buffered output, output
stall, buffered session streams, id length, its part of the server's memory budget). The
registry of live connections is ``remote.registry``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from ..jsonrpc import Connection, ReaderLike, RequestId, WriterLike
from ..peers import Handler, PeerBase
from .budget import MemoryBudget
from .limits import (
    NOTIFICATION_PREFIX,
    RemoteLimits,
    is_response,
    message_id,
    notification_session_id,
    params_session_id,
    parse_message,
    result_session_id,
)
from .pipes import InboundPipe, Mailbox

if TYPE_CHECKING:
    from .registry import Registry

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote

Transport = Literal["http", "ws"]
StreamRunner = Callable[[ReaderLike, WriterLike], Awaitable[None]]
"""An agent that runs its own connection over (reader, writer), e.g. a version router's `serve`."""


class RemoteConnection:
    """One client's ACP connection: the agent it drives and the streams of its output."""

    bounds_stalls = True  # `drain` cuts a client off after `max_output_stall` (WriterLike)

    __slots__ = (  # thousands of these live at once: no per-instance dict
        "registry",
        "limits",
        "id",
        "transport",
        "principal",
        "closed",
        "close_reason",
        "buffered",
        "progress",
        "budget",
        "inbound",
        "connection_stream",
        "sessions",
        "held",
        "unheld_streams",
        "pending_routes",
        "pending_attach",
        "client_routes",
        "initialize_id",
        "initial",
        "initialized",
        "setup_done",
        "_followed",
        "initialized_at",
        "_loop",
        "created",
        "last_activity",
        "last_taken",
        "_room",
        "_agent_task",
        "_connection",
    )

    def __init__(self, registry: Registry, transport: Transport, principal: object) -> None:
        self.registry = registry
        self.limits: RemoteLimits = registry.limits
        self.id = str(uuid.uuid4())
        self.transport = transport
        self.principal = principal
        self.closed = False
        self.close_reason = ""
        self.buffered = 0  # bytes queued for the client, in every mailbox
        self.progress = 0  # times the client took output or the agent input (stall detection)
        self.budget: MemoryBudget = registry.budget
        self.inbound = InboundPipe(self._progress, self.budget.change)
        self.connection_stream = Mailbox(self._count)  # the WebSocket's, for "ws"
        self.sessions: dict[str, Mailbox] = {}
        self.held: set[str] = set()
        self.unheld_streams = 0  # open session streams for sessions not (yet) held
        self.pending_routes: dict[RequestId, str | None] = {}  # our answers: session or None
        self.pending_attach: dict[RequestId, str] = {}
        self.client_routes: dict[RequestId, str | None] = {}  # the client's answers
        self.initialize_id: RequestId | None = None
        self.initial: asyncio.Future[bytes] | None = None
        self.initialized = False  # the agent answered initialize with a result
        self.setup_done = False  # ... and the client came back after it (setup_timeout)
        self._followed = False
        self.initialized_at = 0.0
        self._loop = asyncio.get_running_loop()
        self.created = self.last_activity = self.last_taken = self._loop.time()
        self._room: asyncio.Future[None] | None = None
        self._agent_task: asyncio.Task[None] | None = None
        self._connection: Connection | None = None

    # ------------------------------------------------------------------ the agent

    def start(self, agent: Handler[PeerBase] | StreamRunner) -> None:
        """Run ``agent`` (a handler, or a ``StreamRunner``) on this connection."""
        if isinstance(agent, Handler):
            connection = Connection(agent, agent.inbound_methods, self.inbound, self)
            agent.attach(connection)
            self._connection = connection
            runner: Awaitable[None] = connection.run()
        else:
            runner = agent(self.inbound, self)
        self._agent_task = self.registry.spawn(runner)
        self._agent_task.add_done_callback(self._agent_done)

    def _agent_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.error("agent of connection %s failed", self.id, exc_info=task.exception())
        self.close("agent finished")

    # ------------------------------------------------------------------ WriterLike

    def write(self, data: bytes) -> None:
        """Route the agent's frames (``WriterLike``)."""
        if self.closed:
            raise ConnectionError("connection closed")
        self.touch()  # once per write, not per frame
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end + 1
            self._route(data[start:end] if start or end < len(data) else data)
            start = end

    def must_drain(self) -> bool:
        """Whether ``drain`` would wait or fail (asked by the agent's connection after each
        message: no coroutine a message while there is room)."""
        return (
            self.buffered >= self.limits.max_buffered_bytes
            or self.closed
            or self.budget.output_full
        )

    async def drain(self) -> None:
        """Wait while the client holds ``max_buffered_bytes`` unread or the server's budget is
        spent; cut it off if it stalls."""
        if not self.must_drain():
            return  # room
        limit = self.limits.max_buffered_bytes
        await self._wait_room(
            # Not the agent's unread input: its own writes waiting on that would deadlock.
            lambda: self.buffered >= limit,
            lambda: self.budget.output_full,
        )

    async def room_for_input(self) -> None:
        """Wait while the agent has ``max_buffered_bytes`` of input unread or the server's budget
        is spent (same stall limit)."""
        limit = self.limits.max_buffered_bytes
        if self.inbound.buffered < limit and not self.closed and not self.budget.full:
            return
        await self._wait_room(lambda: self.inbound.buffered >= limit, lambda: self.budget.full)

    async def _wait_room(
        self, own_limit: Callable[[], bool], budget_spent: Callable[[], bool]
    ) -> None:
        """Wait for room; cut the client off after ``max_output_stall`` without progress (its
        client taking output, its agent taking input), unless it waits for the server's budget
        alone and holds no output unread: that is no fault of its own."""
        stall = self.limits.max_output_stall
        loop = asyncio.get_running_loop()
        since, progress = loop.time(), self.progress
        while (own_limit() or budget_spent()) and not self.closed:
            if self.progress != progress:
                since, progress = loop.time(), self.progress
            waited = loop.time() - since
            if waited >= stall:
                if own_limit() or self.buffered:
                    self.close(f"output stalled for {stall} s")
                    break
                since = loop.time()
            if budget_spent() and self.budget.output_full:  # every second: clients to evict
                self.registry.evict_stalled()
                if not (own_limit() or budget_spent()):
                    break  # the eviction made room (and woke waiters before this one waited)
            self._room = loop.create_future()
            self.budget.wait_with(self._wake)
            timeout = stall - waited
            try:
                async with asyncio.timeout(min(timeout, 1.0) if budget_spent() else timeout):
                    await self._room
            except TimeoutError:
                pass
            finally:
                self.budget.done_waiting(self._wake)
                self._room = None
        if self.closed:
            raise ConnectionError(f"connection closed: {self.close_reason}")

    def _count(self, delta: int) -> None:
        self.buffered += delta
        self.budget.change_output(delta)
        if delta < 0:
            self.last_taken = self._loop.time()
            self._progress()

    def _progress(self) -> None:
        self.progress += 1
        self._wake()

    def _wake(self) -> None:
        room = self._room
        if room is not None and not room.done():
            room.set_result(None)

    # ------------------------------------------------------------------ routing

    def _route(self, frame: bytes) -> None:
        if self.transport == "ws":
            if not frame.startswith(NOTIFICATION_PREFIX):
                message = parse_message(frame)
                if message is not None and is_response(message):
                    self._note_response(message)
            self.connection_stream.push(frame)
            return
        session_id = notification_session_id(frame)
        if session_id is not None:  # most of the output: updates, routed without parsing
            self.hold(session_id)
            self.session_stream(session_id).push(frame)
            return
        message = parse_message(frame)
        if message is None:
            self.connection_stream.push(frame)
        elif is_response(message):
            request_id = message_id(message)
            initial = self.initial
            if initial is not None and request_id == self.initialize_id and not initial.done():
                if "result" in message:
                    self._initialized()
                initial.set_result(frame)
                return
            route = self._note_response(message)
            self._deliver(route, frame)
        else:
            session_id = params_session_id(message)
            if session_id is not None:
                self.hold(session_id)
            request_id = message_id(message)
            if request_id is not None and "id" in message:
                self.client_routes[request_id] = session_id
            self._deliver(session_id, frame)

    def _note_response(self, message: dict[str, Any]) -> str | None:
        request_id = message_id(message)
        if request_id is not None and request_id == self.initialize_id and "result" in message:
            self._initialized()
        route = self.pending_routes.pop(request_id, None) if request_id is not None else None
        attach = self.pending_attach.pop(request_id, None) if request_id is not None else None
        if "result" in message:
            created = result_session_id(message)
            if created is not None:
                self.hold(created)
            if attach is not None:
                self.hold(attach)
        return route

    def _deliver(self, session_id: str | None, frame: bytes) -> None:
        if session_id is None:
            self.connection_stream.push(frame)
        else:
            self.session_stream(session_id).push(frame)

    def session_stream(self, session_id: str) -> Mailbox:
        """The mailbox of a session's stream, made on first use (limited while unread)."""
        box = self.sessions.get(session_id)
        if box is None:
            buffered = sum(1 for b in self.sessions.values() if not b.has_receiver)
            if buffered >= self.limits.max_buffered_session_streams:
                self.close("too many buffered session streams")
                raise ConnectionError("connection closed: too many buffered session streams")
            box = self.sessions[session_id] = Mailbox(self._count)
        return box

    def release_stream(self, session_id: str | None, box: Mailbox) -> None:
        """A receiver left: forget a session stream that has nothing queued."""
        box.has_receiver = False
        if session_id is not None and session_id not in self.held:
            self.unheld_streams -= 1
        if session_id is not None and not box.frames and self.sessions.get(session_id) is box:
            del self.sessions[session_id]
            box.close()

    # ------------------------------------------------------------------ sessions and ids

    def hold(self, session_id: str) -> None:
        """Record that this connection holds ``session_id`` (its agent named it)."""
        if session_id in self.held:
            return
        if len(session_id) > self.limits.max_id_length:
            self.close("session id longer than max_id_length")
            raise ConnectionError("connection closed: session id too long")
        box = self.sessions.get(session_id)
        if box is not None and box.has_receiver:
            self.unheld_streams -= 1
        self.held.add(session_id)
        self.registry.holders[session_id] = self

    def may_use(self, session_id: str) -> bool:
        """Whether this connection may name a session it does not hold (nobody else does)."""
        if session_id in self.held:
            return True
        other = self.registry.holders.get(session_id)
        return other is None or other is self or other.closed

    def touch(self) -> None:
        """Note traffic (for the idle limit)."""
        self.last_activity = self._loop.time()

    def client_came_back(self) -> None:
        """Note a client message after its ``initialize``: setup is over once that succeeded."""
        self._followed = True
        self.setup_done = self.initialized

    def _initialized(self) -> None:
        self.initialized = True
        self.initialized_at = self._loop.time()
        self.setup_done = self._followed

    # ------------------------------------------------------------------ closing

    def close(self, reason: str = "agent closed its output") -> None:
        """Cut the connection: end its streams, stop its agent, forget its sessions.

        Also the ``WriterLike`` close, which the agent's ``Connection`` calls when it ends."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        logger.info("closing ACP connection %s: %s", self.id, reason)
        self.connection_stream.close()
        for box in self.sessions.values():
            box.close()
        self.sessions.clear()
        self.inbound.discard()
        self._progress()
        if self.initial is not None and not self.initial.done():
            self.initial.set_exception(ConnectionError(reason))
        self.registry.forget(self)
        if self._connection is not None:
            self.registry.spawn(self._connection.close())
        elif self._agent_task is not None and not self._agent_task.done():
            self._agent_task.cancel()
