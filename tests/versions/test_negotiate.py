"""The negotiating client over real OS pipes: it asks for the newest version it has bindings for
and continues in the version the agent answers with, through that version's typed handle."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from tests.versions.versions_kit import Peer, V1Agent, V2Agent, acp_v1, acp_v2, pipe

INFO = {"name": "test-client", "version": "0.1"}


def offers() -> tuple[dict[int, object], dict[int, Any]]:
    """A v1 and a v2 client with their initialize params."""
    clients: dict[int, object] = {1: acp_v1.Client(), 2: acp_v2.Client()}
    params = {
        1: acp_v1.InitializeRequest.from_dict({"protocolVersion": 1, "clientInfo": INFO}),
        2: acp_v2.InitializeRequest.from_dict({"protocolVersion": 2, "info": INFO}),
    }
    return clients, params


@contextlib.asynccontextmanager
async def against(versions: Mapping[int, object]) -> AsyncIterator[Any]:
    """Negotiate with a router serving ``versions``; yields the handle (its connection running)."""
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    router = asyncio.create_task(acp_v1.VersionRouter(versions).serve(up_reader, down_writer))
    clients, params = offers()
    negotiated = await acp_v2.negotiate(down_reader, up_writer, clients, params)
    async with negotiated.connection:
        yield negotiated
    await asyncio.wait_for(router, 10)


async def test_a_two_version_agent_is_spoken_to_in_v2() -> None:
    async with against({1: V1Agent, 2: V2Agent}) as negotiated:
        assert negotiated.version == 2
        assert isinstance(negotiated.peer, acp_v2.AgentPeer)
        assert isinstance(negotiated.response, acp_v2.InitializeResponse)
        assert negotiated.response.info.name == "v2-agent"
        session = await negotiated.peer.session_new(
            acp_v2.NewSessionRequest.from_dict({"cwd": "/"})
        )
        assert session.session_id == "v2-session"


async def test_a_v1_only_agent_is_spoken_to_in_v1_and_learns_who_the_client_is() -> None:
    async with against({1: V1Agent}) as negotiated:
        assert negotiated.version == 1
        assert isinstance(negotiated.peer, acp_v1.AgentPeer)
        assert isinstance(negotiated.response, acp_v1.InitializeResponse)
        assert negotiated.response.agent_info is not None
        assert negotiated.response.agent_info.name == "v1-agent"
        assert negotiated.response.to_dict()["_meta"]["received"]["clientInfo"] == INFO
        session = await negotiated.peer.session_new(
            acp_v1.NewSessionRequest.from_dict({"cwd": "/", "mcpServers": []})
        )
        assert session.session_id == "v1-session"
        assert negotiated.client.peer is negotiated.peer


async def test_the_wire_initialize_asks_for_the_newest_version() -> None:
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    clients, params = offers()
    task = asyncio.create_task(acp_v2.negotiate(down_reader, up_writer, clients, params))
    agent = Peer(up_reader, down_writer)
    request = await agent.receive()
    assert request["method"] == "initialize" and request["id"] == "initialize"
    assert request["params"]["protocolVersion"] == 2
    assert request["params"]["info"] == INFO
    assert "clientInfo" not in request["params"]  # no custom root fields: only the newest version's
    await agent.send(
        {"jsonrpc": "2.0", "id": "initialize", "result": {"protocolVersion": 3, "info": INFO}}
    )
    with pytest.raises(
        acp_v2.UnsupportedVersionError, match="protocol version 3.*versions 1, 2; closing"
    ):
        await task
    assert await up_reader.read() == b""  # the client closed the connection


async def test_an_error_answer_is_raised() -> None:
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    task = asyncio.create_task(
        acp_v2.negotiate(down_reader, up_writer, {1: acp_v1.Client()}, {1: {"protocolVersion": 1}})
    )
    agent = Peer(up_reader, down_writer)
    await agent.receive()
    await agent.send(
        {
            "jsonrpc": "2.0",
            "id": "initialize",
            "error": {"code": -32022, "message": "Unsupported protocol version"},
        }
    )
    with pytest.raises(acp_v2.RpcError, match="Unsupported protocol version"):
        await task


async def test_the_agent_leaving_before_its_answer_is_a_connection_error() -> None:
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    task = asyncio.create_task(
        acp_v2.negotiate(
            down_reader, up_writer, {2: acp_v2.Client()}, {2: {"protocolVersion": 2, "info": INFO}}
        )
    )
    await Peer(up_reader, down_writer).receive()
    down_writer.close()
    with pytest.raises(ConnectionError, match="before answering initialize"):
        await task


async def answer_with(result: dict[str, Any]) -> tuple[Any, Peer]:
    """Negotiate (offering v1 and v2) against a raw agent that answers initialize with `result`."""
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    clients, params = offers()
    task = asyncio.create_task(acp_v2.negotiate(down_reader, up_writer, clients, params))
    agent = Peer(up_reader, down_writer)
    await agent.receive()
    await agent.send({"jsonrpc": "2.0", "id": "initialize", "result": result})
    return await task, agent


async def test_a_v2_numbered_answer_with_a_v1_body_continues_in_v1_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # issue 33: fast-agent and the PyPI SDK's echo agent echo the requested 2 over a v1 body
    with caplog.at_level("WARNING", logger="acp_runtime"):
        negotiated, agent = await answer_with(
            {
                "protocolVersion": 2,
                "agentCapabilities": {"loadSession": False},
                "agentInfo": {"name": "echoing-agent", "version": "1"},
                "authMethods": [],
            }
        )
    assert negotiated.version == 1
    assert isinstance(negotiated.peer, acp_v1.AgentPeer)
    assert isinstance(negotiated.response, acp_v1.InitializeResponse)
    assert (
        negotiated.response.agent_info is not None
        and negotiated.response.agent_info.name == "echoing-agent"
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "protocolVersion 2 but a v1 body" in warnings[0], warnings
    assert negotiated.warnings == (warnings[0],)
    async with negotiated.connection:  # and the connection speaks v1 from then on
        call = asyncio.create_task(
            negotiated.peer.session_new(
                acp_v1.NewSessionRequest.from_dict({"cwd": "/", "mcpServers": []})
            )
        )
        request = await agent.receive()
        assert request["method"] == "session/new" and request["params"]["mcpServers"] == []
        await agent.send(
            {"jsonrpc": "2.0", "id": request["id"], "result": {"sessionId": "v1-session"}}
        )
        assert (await call).session_id == "v1-session"


async def test_a_real_v2_answer_is_not_mistaken_for_v1_and_a_v1_body_without_v1_bindings_is_refused() -> (
    None
):
    negotiated, _ = await answer_with({"protocolVersion": 2, "info": INFO, "capabilities": {}})
    assert negotiated.version == 2 and negotiated.warnings == ()
    up_reader, up_writer = await pipe()
    down_reader, down_writer = await pipe()
    task = asyncio.create_task(
        acp_v2.negotiate(
            down_reader, up_writer, {2: acp_v2.Client()}, {2: {"protocolVersion": 2, "info": INFO}}
        )
    )
    agent = Peer(up_reader, down_writer)
    await agent.receive()
    await agent.send(
        {
            "jsonrpc": "2.0",
            "id": "initialize",
            "result": {"protocolVersion": 2, "agentInfo": {"name": "a", "version": "1"}},
        }
    )
    with pytest.raises(acp_v2.RpcError, match="invalid initialize answer for protocol version 2"):
        await task
