"""End to end: a generated Client drives a generated Agent in a subprocess over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp


class RecordingClient(acp.Client):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.idle = asyncio.Event()

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        self.events.append(("permission", params.title))
        return acp.RequestPermissionResponse.from_dict(
            {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )

    async def on_user_message(self, params: Any, update: Any) -> None:
        self.events.append(("user_message", update.message_id))

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self.events.append(("chunk", update.content.text))

    async def on_state_update(self, params: Any, update: Any) -> None:
        self.events.append(("state", update.state, getattr(update, "stop_reason", None)))
        if update.state == "idle":
            self.idle.set()

    async def on_unknown_update(self, params: Any, update: Any) -> None:
        self.events.append(("unknown", update.raw))


async def _connect(client: RecordingClient) -> tuple[Any, Any, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(GENERATED), str(Path(__file__).parent)]),
    }
    return await acp.connect_agent(
        [sys.executable, str(Path(__file__).with_name("echo_agent.py"))], client, env=env
    )


async def test_full_prompt_lifecycle_over_a_real_pipe() -> None:
    client = RecordingClient()
    agent, connection, process = await _connect(client)
    async with connection:
        init = await agent.initialize(
            acp.InitializeRequest.from_dict(
                {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}}
            )
        )
        assert init.protocol_version == 2
        session = await agent.session_new(
            acp.NewSessionRequest.from_dict({"cwd": "/tmp", "mcpServers": []})
        )
        response = await agent.session_prompt(
            acp.PromptRequest.from_dict(
                {
                    "sessionId": session.session_id,
                    "prompt": [{"type": "text", "text": "ask permission then echo"}],
                }
            )
        )
        await asyncio.wait_for(client.idle.wait(), 10)
    await process.wait()
    kinds = [e[0] for e in client.events]
    assert client.events[0] == ("user_message", response.message_id)
    assert client.events[1] == ("state", "running", None)
    assert ("permission", "Run the pretend tool?") in client.events
    chunks = [e[1] for e in client.events if e[0] == "chunk"]
    assert chunks == ["selected", "ask", "permission", "then", "echo"]  # strictly in arrival order
    assert ("unknown", {"sessionUpdate": "_vendor_ping", "n": 1}) in client.events
    assert client.events[-1] == ("state", "idle", "end_turn")
    assert kinds.index("permission") < kinds.index("chunk")


async def test_cancel_mid_prompt_ends_with_cancelled_idle() -> None:
    client = RecordingClient()
    agent, connection, process = await _connect(client)
    async with connection:
        await agent.initialize(
            acp.InitializeRequest.from_dict(
                {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}}
            )
        )
        session = await agent.session_new(
            acp.NewSessionRequest.from_dict({"cwd": "/tmp", "mcpServers": []})
        )
        words = " ".join(["slow"] * 200)
        await agent.session_prompt(
            acp.PromptRequest.from_dict(
                {"sessionId": session.session_id, "prompt": [{"type": "text", "text": words}]}
            )
        )
        await asyncio.sleep(0.1)
        await agent.session_cancel(
            acp.CancelSessionNotification.from_dict({"sessionId": session.session_id})
        )
        await asyncio.wait_for(client.idle.wait(), 10)
    await process.wait()
    assert client.events[-1] == ("state", "idle", "cancelled")
    assert 0 < len([e for e in client.events if e[0] == "chunk"]) < 200


async def test_unimplemented_request_answers_method_not_found() -> None:
    client = RecordingClient()
    agent, connection, process = await _connect(client)
    async with connection:
        with pytest.raises(acp.RpcError) as info:
            await agent.session_list(acp.ListSessionsRequest.from_dict({}))
        assert info.value.code == -32601
        assert info.value.data == {"method": "session/list"}
        init = await agent.initialize(
            acp.InitializeRequest.from_dict(
                {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}}
            )
        )
        assert init.protocol_version == 2
    await process.wait()


def test_tables_cover_every_method_of_the_schema() -> None:
    import json

    from acp_codegen.pins import default_pin_path, load_pins
    from acp_codegen.pipeline import ir_for

    pin = load_pins(default_pin_path()).get("acp_v2_draft")
    assert pin is not None
    from acp_codegen.sources import default_cache_dir, default_shared_dir, fetch, parse_source

    raw = fetch(
        parse_source(pin.source),
        expected_sha256=pin.sha256,
        cache_dir=default_cache_dir(),
        shared_dir=default_shared_dir(),
    ).data
    defs = json.loads(raw)["$defs"]
    # independent recomputation: x-side / x-method straight from the JSON
    expected: dict[str, set[str]] = {}
    for schema in defs.values():
        if "x-method" in schema:
            expected.setdefault(schema["x-side"], set()).add(schema["x-method"])
    tables = {
        "agent": acp.AGENT_METHODS,
        "client": acp.CLIENT_METHODS,
        "proxy": acp.PROXY_METHODS,
        "protocol": acp.PROTOCOL_METHODS,
    }
    for side, methods in expected.items():
        assert set(tables[side]) == methods, side
    assert acp.CLIENT_REQUESTS["mcp/message"].kind == "request"
    assert acp.AGENT_NOTIFICATIONS["mcp/message"].kind == "notification"
    assert acp.PROTOCOL_NOTIFICATIONS["$/cancel_request"].params is acp.CancelRequestNotification
    assert acp.AGENT_REQUESTS["session/prompt"].result is acp.PromptResponse
    assert acp.AGENT_REQUESTS["session/prompt"].handler == "session_prompt"
    assert acp.CLIENT_REQUESTS["session/request_permission"].handler == "session_request_permission"
    assert set(acp.PROXY_REQUESTS) == {"proxy/initialize", "proxy/successor"}
    assert set(acp.PROXY_NOTIFICATIONS) == {"proxy/successor"}
    assert ir_for(pin.source, pin.sha256).methods  # IR and tables come from the same schema
