"""Protocol versions through a chain: the conductor and pass-through proxies carry `initialize`
end to end, so a negotiating client and a version-routing agent settle on a version as they would
directly, and a proxy typed for v2 (`version=2`) lets a v1 conversation pass raw."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest
from chain_support import CONDUCTOR, ROOT, chain_env, script

sys.path.insert(0, str(ROOT))

from tests.versions.test_negotiate import offers  # noqa: E402
from tests.versions.versions_kit import acp_v1, acp_v2  # noqa: E402

pytestmark = pytest.mark.timeout(60)

ROUTED = [sys.executable, str(ROOT / "tests" / "versions" / "routed_agent.py")]


def _chain(agent_versions: str, proxy: str) -> list[str]:
    agent = shlex.join([*ROUTED, agent_versions])
    return [CONDUCTOR, "--proxy", shlex.join(script(proxy)), "--agent", agent, "--grace", "2"]


@pytest.mark.parametrize(("agent_versions", "version"), [("1", 1), ("1,2", 2)])
async def test_a_negotiating_client_settles_through_the_chain(
    agent_versions: str, version: int, tmp_path: Path
) -> None:
    clients, params = offers()
    log = tmp_path / "proxy.log"
    negotiated, process = await acp_v2.spawn_negotiated(
        _chain(agent_versions, "context_proxy.py"),
        clients,
        params,
        env=chain_env(PROXY_LOG=str(log)),
    )
    async with negotiated.connection:
        assert negotiated.version == version
        session = await negotiated.peer.session_new(cwd="/tmp", mcp_servers=[])
        assert session.session_id == f"v{version}-session"
        if version == 1:
            # the proxy's v2 prompt hook stays out of a v1 chain: the v1 prompt passes raw
            # (its raw hook logs it; the agent does not implement prompts)
            with pytest.raises(acp_v1.RpcError) as info:
                await negotiated.peer.session_prompt(session.session_id, ["hi"])
            assert info.value.code == -32601
            assert "down session/prompt" in log.read_text().splitlines()
    assert await asyncio.wait_for(process.wait(), 15) == 0


async def test_a_v1_client_reaches_a_two_version_agent() -> None:
    agent, connection, process = await acp_v1.connect_agent(
        _chain("1,2", "passthrough_proxy.py"), acp_v1.Client(), env=chain_env()
    )
    async with connection:
        init = await agent.initialize(protocol_version=1)
        assert init.protocol_version == 1 and init.agent_info.name == "v1-agent"
        session = await agent.session_new(cwd="/tmp", mcp_servers=[])
        assert session.session_id == "v1-session"
    assert await asyncio.wait_for(process.wait(), 15) == 0
