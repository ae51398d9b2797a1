"""End to end over real pipes: a raw client drives `acp-conductor` with 0, 1 and 3 pass-through
proxies in front of a raw mirror agent, each a subprocess."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from acp_runtime.jsonrpc import RpcError, spawn
from chain_support import PERMISSION, RawClient, chain_env, conductor, script

pytestmark = pytest.mark.timeout(60)

ODD = {
    "protocolVersion": 2,
    "clientCapabilities": {"fs": {"readTextFile": True}, "_vendor": {"x": [1, 2.5, None]}},
    "_meta": {"trace": "abc", "nested": {"deep": True}},
    "unknownField": {"kept": "as is"},
}


@pytest.mark.parametrize("hops", [0, 1, 3])
async def test_messages_pass_unchanged_through_the_chain(hops: int) -> None:
    client = RawClient()
    connection, process = await spawn(
        conductor(["passthrough_proxy.py"] * hops), client, {}, env=chain_env()
    )
    async with connection:
        # initialize reaches the agent as `initialize` (the proxies got proxy/initialize)
        init = await connection.request("initialize", ODD, None)
        assert init == {"method": "initialize", "params": ODD}
        # unknown methods, `_meta` and unknown fields, extension or not
        for method in ("_vendor/thing", "future/method", "session/new"):
            answer = await connection.request(method, ODD, None)
            assert answer == {"method": method, "params": ODD}
        # an error keeps its code, message and data
        with pytest.raises(RpcError) as info:
            await connection.request("_fail", {"n": 1}, None)
        assert (info.value.code, info.value.message) == (-32042, "refused on purpose")
        assert info.value.data == {"why": {"n": 1}}
        # notifications keep their order and their params
        for n in range(30):
            await connection.notify("_note", {"n": n, "_meta": {"n": n}})
        seen = await connection.request("_seen", None, None)
        assert seen == [["_note", {"n": n, "_meta": {"n": n}}] for n in range(30)]
        # the agent's notifications and requests reach the client, in order, before the answer
        prompt = {"sessionId": "s1", "prompt": [], "_updates": 40}
        answer = await connection.request("session/prompt", prompt, None)
        assert answer["permission"] == PERMISSION
        updates = [p["update"] for m, p in client.notes if m == "session/update"]
        assert updates == [
            {"sessionUpdate": "agent_message_chunk", "n": n, "_meta": {"k": n}} for n in range(40)
        ]
        assert client.requests == [
            (
                "session/request_permission",
                {"sessionId": "s1", "title": "ok?", "_meta": {"from": "agent"}},
            )
        ]
    assert await asyncio.wait_for(process.wait(), 15) == 0


@pytest.mark.parametrize("hops", [0, 2])
async def test_cancellation_crosses_every_hop(hops: int) -> None:
    client = RawClient()
    connection, process = await spawn(
        conductor(["passthrough_proxy.py"] * hops), client, {}, env=chain_env()
    )
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        slow = asyncio.create_task(connection.request("_slow", {"which": "one"}, None))
        await connection.request("_seen", None, None)  # the slow request is on its way
        await asyncio.sleep(0.2)  # let it reach the agent (not a timing assertion)
        slow.cancel()  # the connection sends $/cancel_request for it
        assert await client.wait_for("_saw_cancel") == {"which": "one"}
        await connection.notify("session/cancel", {"sessionId": "s1", "_meta": {"why": "user"}})
        saw = await client.wait_for("_saw_session_cancel")
        assert saw == {"sessionId": "s1", "_meta": {"why": "user"}}
    assert await asyncio.wait_for(process.wait(), 15) == 0


async def test_chain_shuts_down_when_the_agent_exits(tmp_path: Path) -> None:
    client = RawClient()
    command = conductor(["passthrough_proxy.py"] * 2)
    connection, process = await spawn(command, client, {}, env=chain_env(PROXY_PIDS=str(tmp_path)))
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        with pytest.raises((RpcError, ConnectionError)):
            await connection.request("_exit", None, None)
    assert await asyncio.wait_for(process.wait(), 15) == 1
    pids = [int(p.name) for p in tmp_path.iterdir()]
    assert len(pids) == 2
    for pid in pids:  # the proxies were stopped, not left behind
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_chain_shuts_down_when_the_client_hangs_up(tmp_path: Path) -> None:
    client = RawClient()
    connection, process = await spawn(
        conductor(["passthrough_proxy.py"]), client, {}, env=chain_env(PROXY_PIDS=str(tmp_path))
    )
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
    assert await asyncio.wait_for(process.wait(), 15) == 0
    for pid in [int(p.name) for p in tmp_path.iterdir()]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_a_proxy_refuses_plain_initialize() -> None:
    connection, process = await spawn(
        script("passthrough_proxy.py"), RawClient(), {}, env=chain_env()
    )
    async with connection:
        with pytest.raises(RpcError) as info:
            await connection.request("initialize", {"protocolVersion": 2}, None)
        assert "expects proxy/initialize" in info.value.message
    await asyncio.wait_for(process.wait(), 15)


async def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    missing = await asyncio.create_subprocess_exec(
        *conductor([])[:1],
        "--agent",
        str(tmp_path / "no-such-agent"),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await missing.communicate()
    assert missing.returncode == 2
    assert err.decode().count("\n") == 1 and "cannot start the chain" in err.decode()
