"""`spawn_negotiated` (exported by the generated packages) against real agent processes over their stdio.

The agent is `routed_agent.py` (`serve_versions` on its stdio) serving v1 only, v2 only, or both;
the client offers v1 and v2 bindings and gets the handle of the version the agent answered with.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.versions.test_negotiate import INFO, offers
from tests.versions.versions_kit import acp_v1, acp_v2

AGENT = Path(__file__).with_name("routed_agent.py")


def _command(versions: str) -> list[str]:
    return [sys.executable, str(AGENT), versions]


@pytest.mark.parametrize(
    ("versions", "version", "peer_type", "response_type"),
    [
        ("1", 1, acp_v1.AgentPeer, acp_v1.InitializeResponse),
        ("2", 2, acp_v2.AgentPeer, acp_v2.InitializeResponse),
        ("1,2", 2, acp_v2.AgentPeer, acp_v2.InitializeResponse),
    ],
)
async def test_the_handle_is_the_answered_versions(
    versions: str, version: int, peer_type: type, response_type: type
) -> None:
    clients, params = offers()
    negotiated, process = await acp_v2.spawn_negotiated(_command(versions), clients, params)
    async with negotiated.connection:
        assert negotiated.version == version
        assert isinstance(negotiated.peer, peer_type) and isinstance(
            negotiated.response, response_type
        )
        assert negotiated.client is clients[version] and negotiated.client.peer is negotiated.peer
        if version == 1:
            assert (
                negotiated.response.agent_info is not None
                and negotiated.response.agent_info.name == "v1-agent"
            )
            assert (
                negotiated.response.to_dict()["_meta"]["received"]["clientInfo"] == INFO
            )  # downgraded params
            request = acp_v1.NewSessionRequest.from_dict({"cwd": "/", "mcpServers": []})
        else:
            assert negotiated.response.info.name == "v2-agent"
            request = acp_v2.NewSessionRequest.from_dict({"cwd": "/"})
        session = await negotiated.peer.session_new(request)
        assert session.session_id == f"v{version}-session"
    assert await asyncio.wait_for(process.wait(), 10) == 0  # closing the connection ends the agent


async def test_a_refused_initialize_raises_the_agents_error() -> None:
    clients, params = offers()
    v1_only = ({1: clients[1]}, {1: params[1]})
    with pytest.raises(acp_v1.RpcError) as refused:
        await acp_v1.spawn_negotiated(
            _command("2"), *v1_only
        )  # a v2-only agent asked for version 1
    assert refused.value.code == -32022
