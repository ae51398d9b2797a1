"""The handle an agent's turn gets: the typed prompt, typed and version-neutral senders for its
updates, tool calls and permission requests, and its cancellation.

An agent writes one coroutine per turn, `async def respond(self, turn: Turn) -> str | None`; the
runtime (`session.LiveSession`) runs it and does everything around it. `turn.updates` is the
generated package's typed `SessionHandle` (every update variant of that version); the other
senders (`say`, `think`, `plan`, `tool_call`) speak whichever version the client speaks, so the
same `respond` serves v1 and v2. Every update sent through the turn is also recorded in the
session's history, which `session/resume` replays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .wire import ALLOW_OR_REJECT, FINISHED, Json, allowed, block_text, new_id, tool_content

if TYPE_CHECKING:
    from .session import LiveSession


class ToolCall:
    """One tool call of a turn: report its progress, stream its output, ask to run it."""

    def __init__(self, turn: Turn, call_id: str) -> None:
        self.turn = turn
        self.id = call_id
        self.output_lines: list[str] = []

    async def update(
        self, status: str | None = None, *, note: str | None = None, raw_output: Any = None
    ) -> None:
        """Report a new status (`in_progress`, `completed`, `failed`, `cancelled`); a `note`
        replaces the call's content with that text."""
        content = None if note is None else [tool_content(note)]
        dialect = self.turn.session.dialect
        await self.turn.send(dialect.tool_update(self.id, status, content, raw_output))
        if status in FINISHED:
            self.turn.open_calls.pop(self.id, None)

    async def output(self, text: str) -> None:
        """Stream one piece of the tool's output (v2: a content chunk; v1 replaces the content
        with everything so far, as v1 has no chunk for it)."""
        session = self.turn.session
        if session.dialect.v2:
            chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": self.id}
            await self.turn.send({**chunk, "content": tool_content(text)})
            return
        self.output_lines.append(text)
        content = [tool_content(line) for line in self.output_lines]
        await self.turn.send(session.dialect.tool_update(self.id, None, content, None))

    async def allowed(
        self,
        question: str,
        options: Sequence[Mapping[str, str]] = ALLOW_OR_REJECT,
        allow: frozenset[str] = frozenset({"allow"}),
        *,
        description: str | None = None,
    ) -> bool:
        """Ask the client whether the call may run; True when an `allow` option is picked.

        v2 reports `requires_action` while it waits and `running` after. If the turn is
        cancelled meanwhile, v2 withdraws the request (`$/cancel_request`); v1 has no such
        thing, so its request stays for the client to answer `cancelled`, and the turn ends."""
        session = self.turn.session
        dialect = session.dialect
        params = dialect.permission(session.session_id, self.id, question, options, description)
        connection = session.peer.connection
        if session.dialect.v2:
            await session.set_state("requires_action")
            answer = await connection.request("session/request_permission", params, None)
            await session.set_state("running")
            return allowed(answer, allow)
        asked = asyncio.ensure_future(
            connection.request("session/request_permission", params, None)
        )
        answer = await asyncio.shield(asked)
        if isinstance(answer, Mapping) and answer.get("outcome", {}).get("outcome") == "cancelled":
            raise asyncio.CancelledError  # v1: the client cancelled the turn
        return allowed(answer, allow)


class Turn:
    """One prompt's foreground work, as `respond` sees it."""

    def __init__(self, session: LiveSession, prompt: list[Any], message_id: str) -> None:
        self.session = session
        self.session_id = session.session_id
        self.prompt = prompt
        """The prompt's content blocks (the generated package's `ContentBlock` models)."""
        self.message_id = message_id
        """The id of the inserted user message (v2's prompt answer; v1 does not send it)."""
        self.reply_id = new_id("msg_agent")
        """The message id `say` streams under (`new_reply()` starts another message)."""
        self.thought_id = new_id("msg_thought")
        self.open_calls: dict[str, ToolCall] = {}
        self.plan_id = new_id("plan")

    @property
    def text(self) -> str:
        """The prompt as text (links and resources by their URI)."""
        return " ".join(block_text(block) for block in self.prompt)

    @property
    def cancelled(self) -> bool:
        """Whether the client asked to cancel this turn (it is also cancelled at its next await)."""
        return self.session.cancel_requested

    @property
    def updates(self) -> Any:
        """The generated `SessionHandle`: a typed sender per update variant (recorded too)."""
        return self.session.handle()

    async def send(self, update: Any) -> None:
        """Send one update (a generated model or JSON with wire names), recorded for replay."""
        await self.session.send(update)

    def new_reply(self) -> str:
        """Start a new agent message: `say` streams under a fresh message id (returned)."""
        self.reply_id = new_id("msg_agent")
        return self.reply_id

    async def say(self, text: str) -> None:
        """Stream a chunk of the agent's reply."""
        await self.send(self.session.dialect.message_chunk("agent_message", self.reply_id, text))

    async def think(self, text: str) -> None:
        """Stream a chunk of the agent's reasoning."""
        dialect = self.session.dialect
        await self.send(dialect.message_chunk("agent_thought", self.thought_id, text))

    async def plan(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Report the plan: entries with `content`, `priority` and `status`, replacing the last."""
        await self.send(self.session.dialect.plan(self.plan_id, entries))

    async def tool_call(
        self, title: str, *, kind: str = "other", raw_input: Any = None
    ) -> ToolCall:
        """Report a new tool call, `pending`; it stays open until a finishing status. Calls still
        open when the turn stops short are reported `failed` (an error) or `cancelled`."""
        call = ToolCall(self, new_id("call"))
        self.open_calls[call.id] = call
        await self.send(self.session.dialect.tool_start(call.id, title, kind, raw_input))
        return call

    async def close_open_calls(self, stop_reason: str) -> None:
        """Finish the tool calls still open, before the turn's end is reported."""
        if stop_reason == "end_turn":
            return  # what the turn left open is its own business
        if stop_reason == "cancelled" and not self.session.dialect.v2:
            return  # v1: the client marks the calls of a turn it cancels
        status = "failed" if stop_reason == "error" else "cancelled"
        for call in list(self.open_calls.values()):
            await call.update(status)

    def as_json(self) -> list[Json]:
        """The prompt as JSON content blocks (wire names)."""
        return [b.to_dict() if hasattr(b, "to_dict") else dict(b) for b in self.prompt]
