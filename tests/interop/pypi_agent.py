"""An ACP v1 echo agent built on the PyPI `agent-client-protocol` SDK (public API only), serving
one client on this process's stdio.

Each prompt: an agent_thought_chunk, one agent_message_chunk per word (10 ms apart), a tool call
(`tool_call` pending, then `tool_call_update`s) that first asks `session/request_permission` when
the prompt contains "permission", and the answer with stopReason end_turn. session/cancel stops
the turn at its next await; the prompt is then answered with stopReason cancelled.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from acp import PROTOCOL_VERSION, InitializeResponse, NewSessionResponse, PromptResponse, run_agent
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    Implementation,
    PermissionOption,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

# The update models themselves (the 0.x helpers such as `update_agent_message_text` are gone in
# 1.0), so that one script runs on both the test extra's SDK and 1.0.0rc3 (tests/interop/peers).


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def update_agent_message_text(text: str) -> Any:
    return AgentMessageChunk.model_validate(
        {"sessionUpdate": "agent_message_chunk", "content": text_block(text)}
    )


def update_agent_thought_text(text: str) -> Any:
    return AgentThoughtChunk.model_validate(
        {"sessionUpdate": "agent_thought_chunk", "content": text_block(text)}
    )


def start_tool_call(call_id: str, title: str, *, kind: str, status: str) -> Any:
    return ToolCallStart.model_validate(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": title,
            "kind": kind,
            "status": status,
        }
    )


def update_tool_call(call_id: str, *, status: str, content: list[Any] | None = None) -> Any:
    body: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
    }
    if content is not None:
        body["content"] = content
    return ToolCallProgress.model_validate(body)


ECHO_VERSION = "--echo-version" in sys.argv[1:]


class EchoAgent:
    """Echoes each prompt word by word, with a pretend tool call."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.turns: dict[str, asyncio.Task[None]] = {}
        self.next = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            # `--echo-version`: the SDK's own echo-agent example answers the version it was asked for
            protocol_version=protocol_version if ECHO_VERSION else PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(
                name="pypi-echo-agent", title="PyPI Echo Agent", version="1.0.0"
            ),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        self.next += 1
        return NewSessionResponse(session_id=f"pypi_sess_{self.next}")

    async def work(self, session_id: str, text: str) -> None:
        await self.conn.session_update(
            session_id=session_id, update=update_agent_thought_text("Echoing.")
        )
        for index, word in enumerate(text.split()):
            await asyncio.sleep(0.01)
            await self.conn.session_update(
                session_id=session_id,
                update=update_agent_message_text(word if index == 0 else " " + word),
            )
        call_id = f"call_{self.next}"
        await self.conn.session_update(
            session_id=session_id,
            update=start_tool_call(call_id, "Count the words", kind="other", status="pending"),
        )
        if "permission" in text:
            options = [
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ]
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id=call_id),
                options=options,
            )
            if not (
                isinstance(answer.outcome, AllowedOutcome) and answer.outcome.option_id == "allow"
            ):
                await self.conn.session_update(
                    session_id=session_id, update=update_tool_call(call_id, status="failed")
                )
                return
        await self.conn.session_update(
            session_id=session_id, update=update_tool_call(call_id, status="in_progress")
        )
        await self.conn.session_update(
            session_id=session_id,
            update=update_tool_call(
                call_id,
                status="completed",
                content=[{"type": "content", "content": text_block(f"words: {len(text.split())}")}],
            ),
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
