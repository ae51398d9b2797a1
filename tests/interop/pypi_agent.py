"""An ACP v1 echo agent built on the PyPI `agent-client-protocol` SDK (public API only), serving
one client on this process's stdio.

Each prompt: an agent_thought_chunk, one agent_message_chunk per word (10 ms apart), a tool call
(`tool_call` pending, then `tool_call_update`s) that first asks `session/request_permission` when
the prompt contains "permission", and the answer with stopReason end_turn. session/cancel stops
the turn at its next await; the prompt is then answered with stopReason cancelled.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    start_tool_call,
    text_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    PermissionOption,
    ToolCallUpdate,
)


class EchoAgent:
    """Echoes each prompt word by word, with a pretend tool call."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.turns: dict[str, asyncio.Task[None]] = {}
        self.next = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="pypi-echo-agent", title="PyPI Echo Agent", version="1.0.0"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self.next += 1
        return NewSessionResponse(session_id=f"pypi_sess_{self.next}")

    async def work(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=update_agent_thought_text("Echoing."))
        for index, word in enumerate(text.split()):
            await asyncio.sleep(0.01)
            await self.conn.session_update(session_id=session_id, update=update_agent_message_text(word if index == 0 else " " + word))
        call_id = f"call_{self.next}"
        await self.conn.session_update(session_id=session_id, update=start_tool_call(call_id, "Count the words", kind="other", status="pending"))
        if "permission" in text:
            options = [
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ]
            answer = await self.conn.request_permission(session_id=session_id, tool_call=ToolCallUpdate(tool_call_id=call_id), options=options)
            if not (isinstance(answer.outcome, AllowedOutcome) and answer.outcome.option_id == "allow"):
                await self.conn.session_update(session_id=session_id, update=update_tool_call(call_id, status="failed"))
                return
        await self.conn.session_update(session_id=session_id, update=update_tool_call(call_id, status="in_progress"))
        await self.conn.session_update(
            session_id=session_id,
            update=update_tool_call(call_id, status="completed", content=[{"type": "content", "content": text_block(f"words: {len(text.split())}")}]),
        )

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        turn = asyncio.ensure_future(self.work(session_id, text))
        self.turns[session_id] = turn
        try:
            await turn
        except asyncio.CancelledError:
            if not turn.cancelled():
                raise
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgent()))
