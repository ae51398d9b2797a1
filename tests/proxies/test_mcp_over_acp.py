"""MCP over ACP end to end: a proxy provides an MCP server built with the official `mcp` SDK; the
agent behind the conductor reaches it through `mcp/message` as an `mcp` client session (listing
its tools and calling one), or, knowing only stdio MCP servers, through the conductor's bridge (a
stdio shim); the generated client sees the tool's answer. Every part a process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from chain_support import GENERATED, chain_env, conductor

pytest.importorskip("mcp")
sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp  # noqa: E402

pytestmark = pytest.mark.timeout(60)
_OUT: dict[str, Any] = {"capture_output": True, "text": True, "check": True}


class Client(acp.Client):
    def __init__(self) -> None:
        self.said: list[str] = []

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self.said.append(update.content.text)


async def test_an_agent_calls_a_tool_a_proxy_provides() -> None:
    client = Client()
    # a pass-through proxy between them: mcp/message crosses it raw, both ways
    command = conductor(["tools_proxy.py", "passthrough_proxy.py"], agent="mcp_agent.py")
    agent, connection, process = await acp.connect_agent(command, client, env=chain_env())
    async with connection:
        await agent.initialize(2, acp.Implementation(name="test", version="1"))
        session = await agent.session_new(cwd="/tmp", mcp_servers=[])
        await agent.session_prompt(session.session_id, ["use the tools"])
    assert await asyncio.wait_for(process.wait(), 15) == 0
    # and the tool's progress came back to the agent's MCP client session, in order
    assert client.said == ["add,count: 42 (progress 1,2,3)"]


async def test_the_conductor_bridges_for_an_agent_with_only_stdio_mcp() -> None:
    client = Client()
    command = conductor(["tools_proxy.py"], agent="stdio_mcp_agent.py")
    agent, connection, process = await acp.connect_agent(command, client, env=chain_env())
    async with connection:
        init = await agent.initialize(2, acp.Implementation(name="test", version="1"))
        # the chain says it supports ACP MCP servers (the conductor bridges them)
        assert init.to_dict()["capabilities"]["session"]["mcp"] == {"stdio": {}, "acp": {}}
        session = await agent.session_new(cwd="/tmp", mcp_servers=[])
        await agent.session_prompt(session.session_id, ["use the tools"])
    assert await asyncio.wait_for(process.wait(), 15) == 0
    # the agent started the bridge's stdio shim as an ordinary MCP server and called the tool
    assert client.said == ["calc: 42"]


async def test_a_bridge_removes_what_killed_conductors_left_and_nothing_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a conductor killed by SIGKILL cannot remove its socket directory; the next bridge does
    from acp_runtime.proxies.mcp_bridge import McpBridge

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_OUT)
    dead = tmp_path / f"acp-mcp-{int(gone.stdout)}-left"
    dead.mkdir()
    (dead / "bridge.sock").touch()
    live = tmp_path / f"acp-mcp-{os.getpid()}-live"
    live.mkdir()
    unrelated = tmp_path / "acp-mcp-notapid"
    unrelated.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    async def send(method: str, params: Any) -> Any:
        raise AssertionError("no call")

    bridge = McpBridge(send, 2)
    await bridge.start()
    ours = Path(bridge.path).parent
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, unrelated.name, ours.name]
    )
    assert ours.name.startswith(f"acp-mcp-{os.getpid()}-")
    await bridge.close()
    assert not ours.exists() and live.exists()


def _tools_call(server_id: str, tool: str, request_id: str = "r1") -> dict[str, Any]:
    """The params of an `mcp/message` calling `tool` as the reference SDK sends it (MCP
    2026-07-28: the revision and client capabilities in the request's `_meta`)."""
    mcp_meta = {"protocolVersion": "2026-07-28", "clientCapabilities": {}}
    meta = {f"io.modelcontextprotocol/{k}": v for k, v in mcp_meta.items()}
    params = {"name": tool, "arguments": {}, "_meta": meta}
    return {
        "serverId": server_id,
        "requestId": request_id,
        "method": "tools/call",
        "params": params,
    }


async def test_binding_failures_are_outer_errors_with_the_reference_sdks_codes() -> None:
    # an unknown server id, a requestId already active for the server, a server that stopped
    # while a request waited: outer ACP errors (the TypeScript SDK's -33001, -32602, -33002),
    # never an answer that looks like the tool's own
    from acp_runtime.jsonrpc import RpcError
    from acp_runtime.proxies.mcp_acp import BACKEND_FAILED, SERVER_UNAVAILABLE, McpProvider
    from mcp.server.mcpserver import MCPServer

    slow = MCPServer("slow")
    running, gate = asyncio.Event(), asyncio.Event()

    @slow.tool()
    async def wait() -> str:
        """Wait for the gate."""
        running.set()
        await gate.wait()
        return "done"

    provider = McpProvider()
    server_id = provider.add("slow", slow)
    with pytest.raises(RpcError) as unknown:
        await provider.handle({"serverId": "nobody", "requestId": "1", "method": "tools/list"})
    assert unknown.value.code == SERVER_UNAVAILABLE == -33001
    call = _tools_call(server_id, "wait")
    first = asyncio.create_task(provider.handle(call))
    await asyncio.wait_for(running.wait(), 10)
    with pytest.raises(RpcError) as twice:
        await asyncio.wait_for(provider.handle(call), 10)
    assert twice.value.code == -32602
    await provider.close()
    with pytest.raises(RpcError) as stopped:
        await asyncio.wait_for(first, 10)
    assert stopped.value.code == BACKEND_FAILED == -33002
    with pytest.raises(RpcError) as after:
        await provider.handle({**call, "requestId": "r2"})
    assert after.value.code == BACKEND_FAILED


async def test_a_server_that_fails_to_start_answers_every_request_with_an_outer_error() -> None:
    # its lifespan raises: the server never serves and never closes its streams (requests
    # used to wait for ever)
    import contextlib

    from acp_runtime.jsonrpc import RpcError
    from acp_runtime.proxies.mcp_acp import BACKEND_FAILED, McpProvider
    from mcp.server.mcpserver import MCPServer

    @contextlib.asynccontextmanager
    async def no_database(server: Any) -> Any:
        raise RuntimeError("no database")
        yield

    provider = McpProvider()
    server_id = provider.add("broken", MCPServer("broken", lifespan=no_database))
    for request_id in ("1", "2"):
        with pytest.raises(RpcError) as failed:
            await asyncio.wait_for(
                provider.handle({"serverId": server_id, "requestId": request_id, "method": "ping"}),
                10,
            )
        assert failed.value.code == BACKEND_FAILED
    await provider.close()


async def test_a_withdrawn_request_stops_the_tool() -> None:
    # what the runtime does when the consumer sends $/cancel_request for an mcp/message: it
    # cancels the handler's task; the provider then tells the MCP server (MCP cancellation), and
    # the tool stops instead of running to its end
    from acp_runtime.proxies.mcp_acp import McpProvider
    from mcp.server.mcpserver import MCPServer

    slow = MCPServer("slow")
    running, stopped = asyncio.Event(), asyncio.Event()

    @slow.tool()
    async def wait() -> str:
        """Wait for a long time."""
        running.set()
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "done"

    provider = McpProvider()
    server_id = provider.add("slow", slow)
    handling = asyncio.create_task(provider.handle(_tools_call(server_id, "wait")))
    await asyncio.wait_for(running.wait(), 10)
    handling.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handling
    await asyncio.wait_for(stopped.wait(), 10)
    await provider.close()


async def test_the_bridge_serves_a_v1_agent_untagged_stdio_servers() -> None:
    # protocol v1 behind the conductor: the chain's initialize answer says ACP MCP servers are
    # welcome (agentCapabilities.mcpCapabilities.acp), and the v1 agent gets the bridge's shim as
    # v1's stdio entry (untagged: name, command, args, env)
    from acp_runtime.jsonrpc import spawn
    from chain_support import RawClient

    client = RawClient()
    command = conductor(["tools_proxy.py"], agent="stdio_mcp_agent_v1.py")
    connection, process = await spawn(command, client, {}, env=chain_env())
    async with connection:
        init = await connection.request("initialize", {"protocolVersion": 1}, None)
        assert init["agentCapabilities"]["mcpCapabilities"]["acp"] is True
        await connection.request("session/new", {"cwd": "/tmp", "mcpServers": []}, None)
        answer = await connection.request(
            "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}, None
        )
        assert answer == {"stopReason": "end_turn"}
    assert await asyncio.wait_for(process.wait(), 15) == 0
    said = [p["update"]["content"]["text"] for m, p in client.notes if m == "session/update"]
    assert said == ["calc: 42 (args,command,env,name)"]
