"""End to end: the generated acp_v2_draft client drives `acp-conductor` with a typed proxy (context
block in front of each prompt, "secret" chunks dropped on the way back, raw hooks logging) in front
of the generated echo agent of tests/dispatch, every part a subprocess."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from chain_support import GENERATED, ROOT, chain_env, conductor

sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp  # noqa: E402

pytestmark = pytest.mark.timeout(60)

ECHO = ROOT / "tests" / "dispatch" / "echo_agent.py"


class Recorder(acp.Client):
    def __init__(self) -> None:
        self.user: list[Any] = []
        self.chunks: list[str] = []
        self.idle = asyncio.Event()

    async def on_user_message(self, params: Any, update: Any) -> None:
        self.user = [block.to_dict() for block in update.content]

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self.chunks.append(update.content.text)

    async def on_state_update(self, params: Any, update: Any) -> None:
        if update.state == "idle":
            self.idle.set()


async def test_a_typed_proxy_injects_context_and_filters_updates(tmp_path: Path) -> None:
    log = tmp_path / "proxy.log"
    command = conductor(["context_proxy.py", "passthrough_proxy.py"], agent=str(ECHO))
    client = Recorder()
    agent, connection, process = await acp.connect_agent(
        command, client, env=chain_env(PROXY_LOG=str(log))
    )
    async with connection:
        init = await agent.initialize(
            acp.InitializeRequest.from_dict(
                {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}}
            )
        )
        assert init.protocol_version == 2 and init.to_dict()["info"]["name"] == "echo"
        session = await agent.session_new(cwd="/tmp", mcp_servers=[])
        prompt = [{"type": "text", "text": "tell the secret plan", "_meta": {"mine": 1}}]
        await agent.session_prompt(
            acp.PromptRequest.from_dict({"sessionId": session.session_id, "prompt": prompt})
        )
        await asyncio.wait_for(client.idle.wait(), 15)
    await asyncio.wait_for(process.wait(), 15)
    # the agent got the context block first, and the user's block with its `_meta`
    assert client.user == [{"type": "text", "text": "CONTEXT: the project uses tabs."}, *prompt]
    # the echo of "secret" was dropped on its way back; the rest arrived in order
    assert client.chunks == ["CONTEXT:", "the", "project", "uses", "tabs.", "tell", "the", "plan"]
    # the raw hooks saw what no typed hook took
    lines = log.read_text().splitlines()
    assert "down initialize" in lines and "down session/new" in lines
    assert "down session/prompt" not in lines  # the typed hook took it
