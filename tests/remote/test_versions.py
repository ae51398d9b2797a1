"""The released packages over the remote transport, on a real uvicorn: an `acp_v1` and an
`acp_v2` agent served by their own package's `remote.acp_asgi_app`, driven by the same package's
`remote.connect_url` client over WebSocket and Streamable HTTP; and one server whose connections
each run a `VersionRouter`, so that a v1 client and a v2 client, connected at once, are each
served in their version."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.remote.support import remote, uvicorn_server
from tests.remote.versions_kit import V1Agent, V2Agent, acp_v1, acp_v2, expect_turn, prompt_turn

SCHEMES = ["ws", "http"]
PACKAGES = {"acp_v1": (acp_v1, V1Agent), "acp_v2": (acp_v2, V2Agent)}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("name", sorted(PACKAGES))
async def test_released_package_agent_is_served_remotely(name: str, scheme: str) -> None:
    package, agent = PACKAGES[name]
    async with uvicorn_server(remote.acp_asgi_app(agent())) as base:
        turn = await prompt_turn(package, f"{scheme}://{base}/acp")
    expect_turn(package, turn)


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_version_router_serves_v1_and_v2_clients_on_one_server(scheme: str) -> None:
    router = acp_v2.VersionRouter({1: V1Agent, 2: V2Agent})
    runs: list[str] = []

    def per_connection() -> Any:
        async def run(reader: Any, writer: Any) -> None:
            runs.append("router")
            await router.serve(reader, writer)

        return run

    async with uvicorn_server(remote.acp_asgi_app(per_connection)) as base:
        url = f"{scheme}://{base}/acp"
        v1_turn, v2_turn = await asyncio.gather(prompt_turn(acp_v1, url), prompt_turn(acp_v2, url))
    expect_turn(acp_v1, v1_turn)
    expect_turn(acp_v2, v2_turn)
    assert runs == ["router", "router"]  # one router per connection, each picked its version
