"""The client's side of the prompt lifecycle: `await client.prompt(session_id, "text")` returns
when the turn is over, for v1 and v2 agents alike.

Put `PromptingClient` before a generated `Client`: `class MyClient(PromptingClient, acp.Client)`.
Its `session_update` runs the generated fan-out (`on_<variant>`, your handlers, as updates
arrive) and then notes the update for the turns awaited. `prompt` sends `session/prompt` and
returns a `PromptTurn`: awaiting it gives a `TurnResult` once the turn is over (v2: the `idle` with
a stop reason that follows the insertion of the prompt's message, whose id the answer gave, so an
earlier turn's `idle` is never taken for it; v1: the answer's `stopReason`), with the turn's
updates, the reply's text and (v2) the turn reduced by the package's `SessionState`.
`await turn.cancel()` sends `session/cancel`; the turn then ends `cancelled`.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jsonrpc import RpcError
from .wire import Dialect, dialect_of, text_block

REQUEST_CANCELLED = -32800
_USER_MESSAGE = frozenset({"user_message", "user_message_chunk"})


@dataclass
class TurnResult:
    """How a turn ended and what it said."""

    stop_reason: str
    message_id: str | None = None
    """The inserted user message's id (v2; None in v1, or when refused before insertion)."""
    updates: list[Any] = field(default_factory=list)
    """The turn's `session/update`s, as received (the generated update models)."""
    state: Any = None
    """v2: the turn's updates applied to a fresh `SessionState` of the package (None in v1)."""

    @property
    def text(self) -> str:
        """The agent's reply: the text of its message updates and chunks, in order."""
        parts: list[str] = []
        for update in self.updates:
            data = update.to_dict() if hasattr(update, "to_dict") else update
            if data.get("sessionUpdate") == "agent_message_chunk":
                parts.append(str(data.get("content", {}).get("text", "")))
            elif data.get("sessionUpdate") == "agent_message" and data.get("content"):
                parts = [str(block.get("text", "")) for block in data["content"]]
        return "".join(parts)


class _Log:
    """The updates of one session received while some turn of it is awaited."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.changed = asyncio.Event()
        self.awaited = 0
        self.v1_turn = asyncio.Lock()  # v1 updates carry no message ids: one turn at a time


class PromptTurn:
    """One prompt being run: await it for its `TurnResult`; `cancel()` cancels the turn."""

    def __init__(self, client: PromptingClient, session_id: str, content: list[Any]) -> None:
        self.client = client
        self.session_id = session_id
        self._task = asyncio.ensure_future(client._run_turn(session_id, content))

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._task.__await__()

    async def cancel(self) -> None:
        """Send `session/cancel` for the session: the turn ends `cancelled`."""
        connection = self.client.peer.connection
        await connection.notify("session/cancel", {"sessionId": self.session_id})


class PromptingClient:
    """`prompt(...)` for a generated `Client` (put this class first among its bases)."""

    peer: Any
    binding: Any

    @property
    def _logs(self) -> dict[str, _Log]:
        logs: dict[str, _Log] | None = self.__dict__.get("_prompting_logs")
        if logs is None:
            logs = self.__dict__["_prompting_logs"] = {}
        return logs

    @property
    def agent_dialect(self) -> Dialect:
        """The agent's protocol version's lifecycle (from this package's method tables)."""
        return dialect_of(self.binding.agent_methods)

    async def session_update(self, params: Any) -> None:
        """Run the update's handlers, then note it for the turns awaited in its session."""
        fan_out: Any = super()  # the generated `Client`, next in the bases
        await fan_out.session_update(params)
        log = self._logs.get(str(params.session_id))
        if log is not None:
            log.updates.append(params.update)
            log.changed.set()

    def prompt(self, session_id: str, content: str | Sequence[Any]) -> PromptTurn:
        """Send a prompt (text, or content blocks: models or JSON); await the result for the
        turn's end. The turn is under way as soon as this returns."""
        blocks = [text_block(content)] if isinstance(content, str) else list(content)
        return PromptTurn(self, session_id, blocks)

    async def _run_turn(self, session_id: str, content: list[Any]) -> TurnResult:
        log = self._logs.setdefault(session_id, _Log())
        log.awaited += 1
        start = len(log.updates)
        try:
            return await self._turn(session_id, content, log, start)
        finally:
            log.awaited -= 1
            if log.awaited == 0:  # nobody needs what was noted any more
                self._logs.pop(session_id, None)

    async def _turn(self, session_id: str, content: list[Any], log: _Log, start: int) -> TurnResult:
        blocks = [b.to_dict() if hasattr(b, "to_dict") else b for b in content]
        params = {"sessionId": session_id, "prompt": blocks}
        if not self.agent_dialect.v2:  # v1: the answer is the turn's end
            async with log.v1_turn:  # (the agent runs a session's prompts in turn anyway)
                start = len(log.updates)
                answer = await self._send(params)
                return TurnResult(str(answer.get("stopReason")), updates=log.updates[start:])
        try:
            answer = await self._send(params)
        except RpcError as error:
            if error.code == REQUEST_CANCELLED:  # refused before insertion: cancelled
                return TurnResult("cancelled")
            raise
        message_id = str(answer.get("messageId"))
        connection = self.peer.connection
        inserted = await _find(
            connection,
            log,
            start,
            # the insertion, reported whole or streamed (the spec's MUST), under the answer's id
            lambda d: d.get("sessionUpdate") in _USER_MESSAGE and d.get("messageId") == message_id,
        )
        end = await _find(
            connection,
            log,
            inserted,
            lambda d: d.get("sessionUpdate") == "state_update"
            and d.get("state") == "idle"
            and d.get("stopReason") is not None,
        )
        updates = log.updates[inserted : end + 1]
        stop = log.updates[end]
        reason = str(
            stop.to_dict()["stopReason"] if hasattr(stop, "to_dict") else stop["stopReason"]
        )
        return TurnResult(reason, message_id, updates, self._reduce(updates))

    async def _send(self, params: dict[str, Any]) -> Any:
        return await self.peer.connection.request("session/prompt", params, None)

    def _reduce(self, updates: list[Any]) -> Any:
        """The updates applied to a fresh `SessionState` of this package (None without one)."""
        for cls in type(self).__mro__:
            if "binding" in cls.__dict__:  # the generated `Client`: its package's session module
                package = cls.__module__.rpartition(".")[0]
                try:
                    module = importlib.import_module(f"{package}.session")
                except ImportError:
                    return None
                state = module.SessionState()
                for update in updates:
                    state.apply(update)
                return state
        return None


async def _find(connection: Any, log: _Log, start: int, predicate: Any) -> int:
    """The index of the first noted update from `start` on whose JSON satisfies `predicate`;
    `ConnectionError` if the connection closes first."""
    index = start
    while True:
        while index < len(log.updates):
            update = log.updates[index]
            if predicate(update.to_dict() if hasattr(update, "to_dict") else update):
                return index
            index += 1
        if connection.closed:
            raise ConnectionError("connection closed before the turn ended")
        log.changed.clear()
        # woken by the next update, or by the end of the connection (updates received before
        # it have been noted by then)
        changed = asyncio.ensure_future(log.changed.wait())
        ended = asyncio.ensure_future(connection.wait_closed())
        try:
            await asyncio.wait((changed, ended), return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
            ended.cancel()
