"""The runtime's side of a session: its prompts, one turn at a time, and its history.

`LiveSession.submit` queues a prompt; one worker task per session (started when there is work,
held open by the connection: `Connection.hold`) takes the prompts in arrival order. For each it
inserts the user message (v2: the `user_message` echo under a fresh message id, then the prompt's
answer; acceptance means insertion), reports `running`, runs the agent's `respond` in a task of its
own, and ends the turn with its stop reason: v2's `idle` `state_update`, v1's prompt answer.
`cancel` (`session/cancel`, `$/cancel_request` of a v1 prompt, `session/close`, the connection's
shutdown) stops the turn at its next await and refuses the prompts not inserted yet; the turn then
ends `cancelled`. An exception in `respond` is logged here with its traceback; the client sees
only the `error` stop reason (v1, which has none: a JSON-RPC internal error without the text).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..jsonrpc import RpcError
from .history import HistoryStore, MemoryHistory, record
from .turn import Turn
from .wire import Dialect, Json, block_text, new_id

log = logging.getLogger("acp_runtime.lifecycle")

REQUEST_CANCELLED = -32800
Respond = Callable[[Turn], Awaitable[str | None]]


def now() -> str:
    """The current time, RFC 3339."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


@dataclass
class Pending:
    """A prompt waiting for its turn: v2's answer (`accepted`, the message id) and the turn's
    end (`done`, the stop reason; v1's answer)."""

    prompt: list[Any]
    accepted: asyncio.Future[str]
    done: asyncio.Future[str]
    started: bool = False


class _RecordingPeer:
    """What a generated `SessionHandle` sends through: records each update, then sends it."""

    def __init__(self, session: LiveSession) -> None:
        self._session = session

    async def session_update(self, params: Any) -> None:
        await self._session.send(params.update)


@dataclass
class LiveSession:
    """A session of this process: where it is attached, its queue, its turn, its state."""

    session_id: str
    cwd: str
    dialect: Dialect
    peer: Any
    """The typed peer of the connection the session is attached to (resume moves it)."""
    store: HistoryStore
    title: str | None = None
    updated_at: str = field(default_factory=now)
    state: str = "idle"
    cancel_requested: bool = False
    queue: deque[Pending] = field(default_factory=deque[Pending])
    worker: asyncio.Task[None] | None = None
    turn: asyncio.Task[str | None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.idle.set()

    def describe(self) -> Json:
        """What the store keeps of the session to take it over in another process."""
        info: Json = {"cwd": self.cwd, "version": self.dialect.version}
        info["updatedAt"] = self.updated_at
        return info if self.title is None else {**info, "title": self.title}

    async def save(self) -> None:
        """Write the session's description to the store (at creation and at each prompt)."""
        await self.store.save_session(self.session_id, self.describe())

    def handle(self) -> Any:
        """The generated `SessionHandle` for this session, its updates recorded."""
        handle = self.peer.session(self.session_id)
        return type(handle)(_RecordingPeer(self), self.session_id)

    async def send(self, update: Any) -> None:
        """Send one `session/update` to the attached client and record it (v2) for replay."""
        data: Json = update.to_dict() if hasattr(update, "to_dict") else dict(update)
        if self.dialect.v2:
            await record(self.store, self.session_id, data)
        params = {"sessionId": self.session_id, "update": data}
        await self.peer.connection.notify("session/update", params)

    async def set_state(self, state: str, stop_reason: str | None = None) -> None:
        """Report the foreground state (v2; v1 has no state updates)."""
        self.state = state
        if self.dialect.v2:
            await self.send(self.dialect.state(state, stop_reason))

    # ------------------------------------------------------------------ prompts

    def submit(self, prompt: list[Any], respond: Respond) -> Pending:
        """Queue a prompt; the worker runs it when the turns before it are over."""
        loop = asyncio.get_running_loop()
        pending = Pending(list(prompt), loop.create_future(), loop.create_future())
        self.queue.append(pending)
        if self.worker is None or self.worker.done():
            self.worker = loop.create_task(self._work(respond))
        self.peer.connection.hold(self.worker)
        return pending

    def cancel(self) -> None:
        """Stop the current turn at its next await and refuse the prompts not inserted yet."""
        self.cancel_requested = True
        if self.turn is not None:
            self.turn.cancel()
        while self.queue:
            self._refuse(self.queue.popleft())

    def withdraw(self, pending: Pending) -> bool:
        """Take back a prompt not started yet (its request was cancelled); False if started."""
        if pending.started:
            return False
        if pending in self.queue:
            self.queue.remove(pending)
        return True

    def _refuse(self, pending: Pending) -> None:
        if not pending.accepted.done():
            pending.accepted.set_exception(RpcError(REQUEST_CANCELLED, "Request cancelled"))
        if not pending.done.done():
            pending.done.set_result("cancelled")

    async def _work(self, respond: Respond) -> None:
        stopping = False
        pending: Pending | None = None
        try:
            while self.queue and not stopping:
                pending = self.queue.popleft()
                pending.started = True
                self.idle.clear()
                stopping = await self._run(pending, respond)
                pending = None
        finally:
            self.idle.set()
            if pending is not None:  # cancelled while inserting: the prompt is refused
                self._refuse(pending)
            while self.queue:  # the connection shut down: refuse the rest, answered
                self._refuse(self.queue.popleft())

    async def _run(self, pending: Pending, respond: Respond) -> bool:
        """One turn, from insertion to its end; True when the worker itself was cancelled."""
        self.cancel_requested = False
        turn = Turn(self, pending.prompt, new_id("msg_user"))
        try:
            await self._insert(turn, pending)
        except ConnectionError:
            self._refuse(pending)
            return True
        stopping = False
        task = None if self.cancel_requested else asyncio.ensure_future(respond(turn))
        self.turn = task
        if task is not None:
            try:
                await asyncio.wait([task])
            except asyncio.CancelledError:  # the connection is shutting down: end the turn
                self._uncancel()
                stopping = True
                task.cancel()
                await asyncio.wait([task])
        self.turn = None
        reason = self._outcome(task)
        try:
            await turn.close_open_calls(reason)
            if self.dialect.v2:
                await self.set_state("idle", reason)
        except ConnectionError:
            stopping = True  # the client is gone: there is no one left to tell
        except Exception:  # noqa: BLE001 (logged with its traceback; the prompt is still answered)
            log.exception("session %s: reporting the end of the turn failed", self.session_id)
        if pending.done.done():
            pass
        elif reason == "error" and not self.dialect.v2:
            pending.done.set_exception(RpcError.internal_error())  # v1 has no `error` reason
        else:
            pending.done.set_result(reason)
        return stopping

    async def _insert(self, turn: Turn, pending: Pending) -> None:
        """Insert the user message: report it (v2), then let the prompt be answered."""
        if self.dialect.v2:
            echo = {"sessionUpdate": "user_message", "messageId": turn.message_id}
            await self.send({**echo, "content": turn.as_json()})
        self.title = self.title or " ".join(block_text(b) for b in turn.prompt)[:60] or None
        self.updated_at = now()
        await self.save()
        if not pending.accepted.done():
            pending.accepted.set_result(turn.message_id)
        if self.dialect.v2 and not self.cancel_requested:
            await self.set_state("running")

    def _outcome(self, task: asyncio.Task[str | None] | None) -> str:
        if task is None or task.cancelled() or self.cancel_requested:
            return "cancelled"
        error = task.exception()
        if isinstance(error, ConnectionError):
            return "cancelled"  # the client's answer cannot come (it hung up)
        if error is not None:
            log.error("session %s: the turn failed", self.session_id, exc_info=error)
            return "error"
        return task.result() or "end_turn"

    @staticmethod
    def _uncancel() -> None:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()


class Sessions:
    """The live sessions of a process and their history store. One per agent by default; give
    the same one to the agents of every connection to resume sessions across connections."""

    session_type: type[LiveSession] = LiveSession
    """The class of the sessions `open` makes (a subclass can change any step of a turn)."""

    def __init__(self, store: HistoryStore | None = None) -> None:
        self.store: HistoryStore = MemoryHistory() if store is None else store
        self.live: dict[str, LiveSession] = {}

    def open(
        self, cwd: str, dialect: Dialect, peer: Any, session_id: str | None = None
    ) -> LiveSession:
        """Create a session attached to `peer`'s connection."""
        made = self.session_type(session_id or new_id("sess"), cwd, dialect, peer, self.store)
        session = made
        self.live[session.session_id] = session
        return session

    async def attach(self, session_id: str, dialect: Dialect, peer: Any) -> LiveSession:
        """A live session of this dialect or, if the store knows it (another worker made it, or
        this process before a restart), the session taken over from the store, idle, attached
        to `peer`; otherwise the `-32002` (resource not found) error."""
        if session_id in self.live:
            return self.get(session_id, dialect)
        info = await self.store.load_session(session_id)
        if info is None or (int(info.get("version", 0)) >= 2) != dialect.v2:
            raise RpcError(-32002, "Resource not found", {"sessionId": session_id})
        if session_id in self.live:  # taken over by another connection while loading
            return self.get(session_id, dialect)
        session = self.open(str(info.get("cwd", "")), dialect, peer, session_id)
        session.title = info.get("title")
        session.updated_at = str(info.get("updatedAt") or session.updated_at)
        return session

    def get(self, session_id: str, dialect: Dialect) -> LiveSession:
        """A live session of this dialect, or the `-32002` (resource not found) error."""
        session = self.live.get(session_id)
        if session is None or session.dialect.v2 != dialect.v2:
            raise RpcError(-32002, "Resource not found", {"sessionId": session_id})
        return session

    async def close(self, session_id: str) -> None:
        """Cancel the session's work, wait for its end (reported), then forget the session."""
        session = self.live.pop(session_id, None)
        if session is None:
            return
        session.cancel()
        await session.idle.wait()
        await self.store.forget(session_id)
