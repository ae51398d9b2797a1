"""`TurnAgent`: the session methods of an agent, written once for ACP v1 and v2, around the one
coroutine an agent author writes (`respond`).

Put it before the generated `Agent` of any package: `class MyAgent(TurnAgent, acp.Agent)`. It
answers `initialize` (the agent's `name`, `title`, `version`), `session/new`, `session/prompt`,
`session/cancel`, `session/close`, `session/list` and `session/resume` (v2: replaying the
materialized history, of a session of this process or one its store knows), and runs each
prompt's turn (`session.LiveSession`). Each method can be overridden; the answers are built with
the package's own result models, found in its method table, so the runtime needs no generated
package.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from ..jsonrpc import RpcError
from .session import LiveSession, Sessions
from .turn import Turn
from .wire import Dialect, dialect_of

INVALID_REQUEST = -32600


class TurnAgent:
    """The prompt lifecycle of an agent: subclass with the generated `Agent` and write `respond`."""

    name: ClassVar[str] = "acp-agent"
    """`initialize`'s implementation name."""
    title: ClassVar[str | None] = None
    version: ClassVar[str] = "0.0.0"

    peer: Any

    def __init__(self, sessions: Sessions | None = None) -> None:
        self.sessions = Sessions() if sessions is None else sessions

    async def respond(self, turn: Turn) -> str | None:
        """Do the work of one prompt; return a stop reason (None: `end_turn`). Cancellation
        arrives as `asyncio.CancelledError` at an await; an exception ends the turn `error`."""
        raise NotImplementedError("TurnAgent subclasses write respond(turn)")

    @property
    def dialect(self) -> Dialect:
        """Which protocol version's lifecycle this agent speaks (from its method table)."""
        return dialect_of(self._methods)

    @property
    def _methods(self) -> Any:
        # The generated handler's method table (its own property: not redeclared here, which
        # type checkers would take for an incompatible override).
        handler: Any = self
        return handler.inbound_methods

    def answer(self, method: str, data: dict[str, Any]) -> Any:
        """`method`'s result model of this package, from wire-named JSON."""
        return self._methods[method].result.from_dict(data)

    def capabilities(self) -> dict[str, Any]:
        """The agent's capabilities (wire names): v2's baseline session methods, v1's default."""
        return {"session": {}} if self.dialect.v2 else {}

    async def initialize(self, params: Any) -> Any:
        """Say who the agent is and what it supports (the router picked the version already)."""
        info = {"name": self.name, "version": self.version}
        if self.title is not None:
            info["title"] = self.title
        version = self.dialect.version
        if not self.dialect.v2:
            data = {
                "protocolVersion": 1,
                "agentInfo": info,
                "agentCapabilities": self.capabilities(),
            }
            return self.answer("initialize", data)
        if params.protocol_version < version:  # only a repeated initialize gets here
            raise RpcError(INVALID_REQUEST, f"Invalid request: initialize must ask for {version}")
        data = {"protocolVersion": version, "info": info, "capabilities": self.capabilities()}
        return self.answer("initialize", data)

    async def session_new(self, params: Any) -> Any:
        """Create a session, idle, attached to this connection."""
        session = self.sessions.open(str(params.cwd), self.dialect, self.peer)
        await session.save()  # known to the store: another worker can take it over
        return self.answer("session/new", {"sessionId": session.session_id})

    async def session_prompt(self, params: Any) -> Any:
        """v2: answer with the inserted message's id; v1: with the turn's stop reason."""
        session = self.sessions.get(params.session_id, self.dialect)
        pending = session.submit(list(params.prompt), self.respond)
        if self.dialect.v2:
            try:
                message_id = await asyncio.shield(pending.accepted)
            except asyncio.CancelledError:  # `$/cancel_request`: withdrawn unless inserted
                if session.withdraw(pending):
                    raise
                _uncancel()
                message_id = await pending.accepted
            return self.answer("session/prompt", {"messageId": message_id})
        # v1: the answer is the turn's end; held so the connection's shutdown waits for it.
        task = asyncio.current_task()
        if task is not None:
            self.peer.connection.hold(task)
        try:
            reason = await asyncio.shield(pending.done)
        except asyncio.CancelledError:  # `$/cancel_request`, or the connection shuts down
            if session.withdraw(pending):
                raise
            _uncancel()
            session.cancel()
            reason = await pending.done
        return self.answer("session/prompt", {"stopReason": reason})

    async def session_cancel(self, params: Any) -> None:
        """Stop the session's turn; it ends `cancelled`, and queued prompts are refused."""
        session = self.sessions.live.get(params.session_id)
        if session is not None:
            session.cancel()

    async def session_close(self, params: Any) -> Any:
        """Cancel like `session/cancel`, wait for the turn's end, then forget the session (an
        unknown session is closed already: fine)."""
        await self.sessions.close(params.session_id)
        return self.answer("session/close", {})

    async def session_list(self, params: Any) -> Any:
        """The live sessions (one page), filtered by `cwd` when given."""
        cwd = None if params.cwd is None else str(params.cwd)
        mine = [s for s in self.sessions.live.values() if s.dialect.v2 == self.dialect.v2]
        infos = [self.session_info(s) for s in mine if cwd in (None, s.cwd)]
        return self.answer("session/list", {"sessions": infos})

    @staticmethod
    def session_info(session: LiveSession) -> dict[str, Any]:
        """A session as `session/list` describes it."""
        info = {
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "updatedAt": session.updated_at,
        }
        return info if session.title is None else {**info, "title": session.title}

    async def session_resume(self, params: Any) -> Any:
        """Attach the session to this connection; replay its history when asked (`replayFrom`
        `start`: each entry once, materialized, with its original ids), then report its state."""
        replay = getattr(params, "replay_from", None)
        replay = None if replay is None else replay.to_dict()
        if replay is not None and replay.get("type") != "start":
            raise RpcError.invalid_params({"replayFrom": replay, "supported": ["start"]})
        session = await self.sessions.attach(params.session_id, self.dialect, self.peer)
        session.peer = self.peer  # its updates go to this connection from now on
        if replay is not None:
            for entry in await session.store.entries(session.session_id):
                update = {"sessionId": session.session_id, "update": entry}
                await self.peer.connection.notify("session/update", update)
        if self.dialect.v2:
            await self.peer.connection.notify(
                "session/update",
                {"sessionId": session.session_id, "update": session.dialect.state(session.state)},
            )
        return self.answer("session/resume", {})


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
