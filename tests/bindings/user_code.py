"""A user's agent and client against the generated bindings, as a new user writes them: it must
pass `mypy --strict` and pyright in strict mode with no ignores (tests/bindings/test_typing.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import acp_v1
import acp_v2_draft as acp


class EchoAgent(acp.Agent):
    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.peer.session(params.session_id)
        text = " ".join(b.text for b in params.prompt if isinstance(b, acp.ContentBlockText))
        await session.state_update_running()
        await session.agent_message_chunk(text, message_id="m1")
        await session.agent_message_chunk(acp.ContentBlockText(text="!"), message_id="m1")
        await session.tool_call_update(tool_call_id="t1", title="Reading", kind=acp.ToolKind.READ)
        await session.tool_call_update(tool_call_id="t1", status=acp.ToolCallStatus.COMPLETED)
        await session.tool_call_update(tool_call_id="t1", status="failed")
        await session.plan_removed("p")
        await session.state_update_idle_end_turn()
        return acp.PromptResponse(message_id="u1")


class Printer(acp.Client):
    async def on_agent_message_chunk(
        self, params: acp.UpdateSessionNotification, update: acp.SessionUpdateAgentMessageChunk
    ) -> None:
        if isinstance(update.content, acp.ContentBlockText):
            print(update.content.text, end="")

    async def on_unknown_update(
        self, params: acp.UpdateSessionNotification, update: acp.UnknownSessionUpdate
    ) -> None:
        print("unknown", update.raw)


def blocks() -> Sequence[acp.ContentBlockText]:
    return [acp.ContentBlockText(text="hi")]


async def client_main() -> None:
    async with acp.spawn_agent(
        sys.executable, "-m", "my_agent", client=Printer(), stderr=subprocess.PIPE, grace=2.0
    ) as agent:
        await agent.initialize(protocol_version=2, info=acp.Implementation(name="me", version="1"))
        session = await agent.new_session(cwd="/tmp")
        answer = await agent.prompt(session.session_id, "hello")
        again = await agent.session_prompt(
            acp.PromptRequest(session_id=session.session_id, prompt=blocks())
        )
        mixed: list[acp.ContentBlock | str] = ["a", acp.ContentBlockText(text="b")]
        await agent.prompt(session.session_id, mixed)
        print(answer.message_id, again.message_id)
        count: int = await agent.ext_request("_vendor/count", {"of": "x"}, result_type=int)
        await agent.ext_notify("_vendor/ping")
        print(count, agent.stderr.text() if agent.stderr else "")


async def v1_client(agent: acp_v1.AgentPeer) -> acp_v1.PromptResponse:
    prompt = [acp_v1.ContentBlockText(text="hi")]
    await agent.prompt("s", prompt)
    return await agent.prompt(acp_v1.PromptRequest(session_id="s", prompt=prompt))


async def agent_main() -> None:
    await acp.serve_agent(EchoAgent())
