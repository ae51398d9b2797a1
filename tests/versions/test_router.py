"""The version router over real OS pipes: pre-initialize traffic, version selection, params.

Each rule of `VersionRouter` (acp_codegen/runtime/_router.py) is driven with raw JSON-RPC lines from
the client side of a pipe pair; after routing, the selected package's `Connection` answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from tests.versions.versions_kit import Peer, V1Agent, V2Agent, acp_v1, acp_v2, initialize, pipe

V2_INFO = {"name": "test-client", "version": "0.1"}


@contextlib.asynccontextmanager
async def routed(
    versions: Mapping[int, object], router_package: Any = acp_v2
) -> AsyncIterator[tuple[Peer, asyncio.Task[Any]]]:
    """A router serving ``versions`` on one end of two pipes; the test holds the other end."""
    to_agent_reader, to_agent_writer = await pipe()
    to_client_reader, to_client_writer = await pipe()
    router = router_package.VersionRouter(versions)
    task = asyncio.create_task(router.serve(to_agent_reader, to_client_writer))
    try:
        yield Peer(to_client_reader, to_agent_writer), task
    finally:
        to_agent_writer.close()
        await asyncio.wait_for(task, 10)


BOTH = {1: V1Agent, 2: V2Agent}


async def test_notifications_and_responses_before_initialize_are_ignored() -> None:
    async with routed(BOTH) as (peer, _):
        await peer.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
        )
        await peer.send({"jsonrpc": "2.0", "id": 7, "result": {}})
        await peer.send({"jsonrpc": "2.0", "id": 8, "error": {"code": 1, "message": "m"}})
        await peer.nothing_pending()
        answer = await peer.call(initialize(2, info=V2_INFO))
        assert answer["result"]["protocolVersion"] == 2


async def test_other_requests_before_initialize_get_invalid_request_and_the_connection_stays_open() -> (
    None
):
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(
            {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/"}}
        )
        assert answer["id"] == 3 and answer["error"]["code"] == -32600
        assert answer["error"]["data"] == "first ACP request must be initialize"
        answer = await peer.call({"id": 4, "method": "initialize"})  # no jsonrpc member
        assert answer["id"] is None and answer["error"]["code"] == -32600
        answer = await peer.call("not json")
        assert answer["id"] is None and answer["error"]["code"] == -32700
        answer = await peer.call(initialize(1))
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1


async def test_a_batch_gets_one_invalid_request_with_a_null_id() -> None:
    async with routed(BOTH) as (peer, _):
        batch = [initialize(2, info=V2_INFO), initialize(1, request_id=2)]
        answer = await peer.call(batch)
        assert answer == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request: JSON-RPC batches are not supported",
            },
        }
        await peer.nothing_pending()
        assert (await peer.call(initialize(2, info=V2_INFO)))["result"]["protocolVersion"] == 2


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {},
        {"protocolVersion": "2"},
        {"protocolVersion": -1},
        {"protocolVersion": 70000},
        {"protocolVersion": 1.5},
        {"protocolVersion": True},
    ],
)
async def test_a_malformed_protocol_version_gets_invalid_params(params: Any) -> None:
    async with routed(BOTH) as (peer, _):
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": 5, "method": "initialize"}
        if params is not None:
            message["params"] = params
        answer = await peer.call(message)
        assert answer["id"] == 5 and answer["error"]["code"] == -32602
        assert "protocolVersion" in answer["error"]["data"]
        assert (await peer.call(initialize(1)))["result"]["protocolVersion"] == 1


async def test_malformed_params_for_exactly_the_selected_version_are_rejected_then_retried() -> (
    None
):
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(initialize(2))  # v2 requires `info`
        assert answer["id"] == 1 and answer["error"]["code"] == -32602
        assert "invalid initialize params" in answer["error"]["data"]
        answer = await peer.call(initialize(2, request_id=2, info={"name": 3}))
        assert answer["error"]["code"] == -32602
        answer = await peer.call(initialize(2, request_id=3, info=V2_INFO))
        assert answer["id"] == 3 and answer["result"]["protocolVersion"] == 2
        assert answer["result"]["_meta"]["received"]["info"] == V2_INFO


async def test_v2_route_needs_a_string_or_integer_id() -> None:
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(initialize(2, request_id=None, info=V2_INFO))
        assert answer["id"] is None and answer["error"]["code"] == -32600
        assert "strings or integers" in answer["error"]["message"]
        answer = await peer.call(initialize(2, request_id="init", info=V2_INFO))
        assert answer["id"] == "init" and answer["result"]["protocolVersion"] == 2


@pytest.mark.parametrize(("requested", "selected"), [(1, 1), (2, 2), (3, 2), (65535, 2)])
async def test_highest_configured_version_at_or_below_the_requested_one(
    requested: int, selected: int
) -> None:
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(initialize(requested, info=V2_INFO))
        assert answer["result"]["protocolVersion"] == selected
        received = answer["result"]["_meta"]["received"]
        assert (
            received["protocolVersion"] == selected
        )  # the routed initialize names the selected version


async def test_no_configured_version_at_or_below_gets_unsupported_protocol_version() -> None:
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(initialize(0))
        assert answer["error"] == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"requested": 0, "supported": [1, 2]},
        }
        assert (await peer.call(initialize(1)))["result"]["protocolVersion"] == 1


async def test_v2_only_agent_asked_for_version_1_refuses_and_stays_open() -> None:
    async with routed({2: V2Agent}) as (peer, _):
        answer = await peer.call(initialize(1))
        assert answer["id"] == 1
        assert answer["error"] == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"requested": 1, "supported": [2]},
        }
        answer = await peer.call(initialize(2, request_id=2, info=V2_INFO))
        assert answer["result"]["protocolVersion"] == 2


@pytest.mark.parametrize("router_package", [acp_v1, acp_v2])
async def test_v1_only_agent_asked_for_version_2_answers_in_v1(router_package: Any) -> None:
    async with routed({1: V1Agent}, router_package) as (peer, _):
        answer = await peer.call(
            initialize(2, info=V2_INFO, capabilities={"auth": {"terminal": {}}})
        )
        assert answer["result"]["protocolVersion"] == 1
        received = answer["result"]["_meta"]["received"]
        assert received["protocolVersion"] == 1
        assert received["clientInfo"] == V2_INFO
        assert received["clientCapabilities"]["auth"]["terminal"] is True
        assert "info" not in received and "capabilities" not in received


async def test_downgrading_drops_what_does_not_parse_instead_of_rejecting() -> None:
    async with routed(BOTH) as (peer, _):
        answer = await peer.call(initialize(2 + 1, info={"name": 42}, capabilities="bogus"))
        assert answer["result"]["protocolVersion"] == 2
        assert answer["result"]["_meta"]["received"]["info"] == {
            "name": "unknown",
            "version": "unknown",
        }
    async with routed({1: V1Agent}) as (peer, _):
        answer = await peer.call(initialize(2, info="not an implementation"))
        received = answer["result"]["_meta"]["received"]
        assert answer["result"]["protocolVersion"] == 1 and "clientInfo" not in received


async def test_a_connection_is_never_rerouted() -> None:
    async with routed(BOTH) as (peer, _):
        assert (await peer.call(initialize(1)))["result"]["protocolVersion"] == 1
        again = await peer.call(initialize(2, request_id=2, info=V2_INFO))
        # The v1 implementation handles the repeat (it answers in v1, it saw v1 params unrouted).
        assert again["id"] == 2 and again["result"]["protocolVersion"] == 1
        assert again["result"]["_meta"]["received"]["protocolVersion"] == 2
        session = await peer.call(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        )
        assert session["result"]["sessionId"] == "v1-session"


async def test_bytes_after_initialize_in_the_same_write_reach_the_selected_connection() -> None:
    async with routed(BOTH) as (peer, _):
        import json

        both = (
            json.dumps(initialize(2, info=V2_INFO))
            + "\n"
            + json.dumps(
                {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/"}}
            )
        )
        await peer.send(both)
        first, second = await peer.receive(), await peer.receive()
        assert first["result"]["protocolVersion"] == 2
        assert second["result"]["sessionId"] == "v2-session"


async def test_client_leaving_before_initialize_ends_the_route() -> None:
    async with routed(BOTH) as (peer, task):
        await peer.send({"jsonrpc": "2.0", "method": "ping"})
    assert task.result() is None


async def test_one_instance_per_connection_from_a_factory_and_peer_is_set() -> None:
    async with routed(BOTH) as (peer, task):
        await peer.call(initialize(1))
    routed_to = task.result()
    assert routed_to.version == 1 and isinstance(routed_to.handler, V1Agent)
    assert isinstance(routed_to.handler.peer, acp_v1.ClientPeer)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        acp_v2.VersionRouter({})
    with pytest.raises(ValueError, match="not an ACP protocol version"):
        acp_v2.VersionRouter({0: V1Agent})


def test_a_handler_of_no_generated_package_is_reported() -> None:
    with pytest.raises(TypeError, match="expected an agent handler"):
        acp_v2.VersionRouter({1: object()})  # type: ignore[dict-item]


async def test_a_factory_that_makes_no_handler_is_reported_on_its_connection() -> None:
    router = acp_v2.VersionRouter({1: lambda: object()})  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="the factory made"):
        router._handler(1)
