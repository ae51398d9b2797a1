"""Extension methods over a real pipe: typed `ext_request` / `ext_notify` on both peers, names
without `_` refused before anything is sent, inbound extension requests reaching
`extension_request` (-32601 by default) and notifications reaching `extension_notification`;
`on_unknown_update` runs for an open union's unknown variants and does not exist on a closed one."""

from __future__ import annotations

import asyncio
from typing import Any

import acp_v1
import acp_v2_draft as acp
import pytest
from bindings_support import HERE, PYTHON, python_env

PEER = str(HERE / "builder_peer.py")


class Client(acp.Client):
    def __init__(self) -> None:
        self.notes: list[tuple[str, Any]] = []
        self.unknown: list[Any] = []

    async def extension_request(self, method: str, params: Any) -> Any:
        if method == "_client/echo":
            return {"echo": params}
        return await super().extension_request(method, params)

    async def extension_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))

    async def on_unknown_update(
        self, params: acp.UpdateSessionNotification, update: acp.UnknownSessionUpdate
    ) -> None:
        self.unknown.append(update.raw)


async def test_extension_requests_and_notifications_both_ways() -> None:
    client = Client()
    async with acp.spawn_agent(
        PYTHON, PEER, "acp_v2_draft", client=client, env=python_env()
    ) as agent:
        # client -> agent: unimplemented extension requests answer -32601
        with pytest.raises(acp.RpcError) as caught:
            await agent.ext_request("_vendor/nothing", {"a": 1})
        assert caught.value.code == -32601
        # a typed result
        echoed = await agent.ext_request(
            "_test/ask_client",
            {"method": "_client/echo", "params": {"k": 1}},
            result_type=dict[str, Any],
        )
        assert echoed == {"result": {"echo": {"k": 1}}}
        # agent -> client: the client's default also answers -32601
        assert await agent.ext_request(
            "_test/ask_client", {"method": "_client/other", "params": {}}
        ) == {"error": -32601}
        # notifications reach extension_notification
        await agent.ext_notify("_vendor/note", {"n": 2})
        seen = await agent.ext_request("_test/seen", None)
        assert seen[-1] == {"method": "_vendor/note", "params": {"n": 2}}
        # names without `_` are refused on both sides, before anything is sent
        with pytest.raises(ValueError, match="start with '_'"):
            await agent.ext_request("vendor/x", {})
        with pytest.raises(ValueError):
            await agent.ext_notify("session/prompt", {})
        assert "vendor/x" in (await agent.ext_request("_test/unprefixed", {}))["refused"]
        # an extension variant of session/update reaches on_unknown_update
        fields = {"session_update": "_vendor/progress", "percent": 50}
        await agent.ext_request(
            "_test/custom_update", {"session": "s", "union": "SessionUpdate", "fields": fields}
        )
        for _ in range(200):
            if client.notes and client.unknown:
                break
            await asyncio.sleep(0.01)
        assert client.unknown == [{"sessionUpdate": "_vendor/progress", "percent": 50}]
        assert client.notes == [("_agent/done", {"n": 1})]


async def test_an_extension_request_takes_a_timeout_and_the_peer_is_told_to_cancel() -> None:
    async with acp.spawn_agent(
        PYTHON, PEER, "acp_v2_draft", client=Client(), env=python_env()
    ) as agent:
        assert (
            await agent.ext_request("_test/seen", None) == []
        )  # the agent is up: the next handler starts at once
        with pytest.raises(TimeoutError, match="_test/sleep got no answer within 1 s"):
            await agent.ext_request("_test/sleep", {"seconds": 30}, timeout=1)
        for _ in range(200):  # the peer's handler was cancelled by `$/cancel_request`
            if {"cancelled": "_test/sleep"} in await agent.ext_request("_test/seen", None):
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the peer never saw the cancellation")
        assert await agent.ext_request("_test/sleep", {"seconds": 0}, timeout=None) == {"slept": 0}
        assert await agent.ext_request(
            "_test/sleep", {"seconds": 0}, result_type=dict[str, int], timeout=5
        ) == {"slept": 0}


async def test_result_type_may_be_a_model() -> None:
    async with acp.spawn_agent(
        PYTHON, PEER, "acp_v2_draft", client=Client(), env=python_env()
    ) as agent:
        answer = await agent.ext_request(
            "_test/emit",
            {
                "model": "SessionUpdateAgentMessageChunk",
                "wire": {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": {"type": "text", "text": "x"},
                },
                "params": ["content", "message_id"],
                "builder": "agent_message_chunk",
                "session": "s",
            },
            result_type=dict[str, bool],
        )
        assert answer == {"sent": True}


def test_on_unknown_update_exists_only_where_it_can_run() -> None:
    assert hasattr(acp.Client, "on_unknown_update")  # draft: SessionUpdate keeps unknown variants
    assert not hasattr(acp_v1.Client, "on_unknown_update")  # v1: the union is closed
