"""End to end over real pipes: a raw client drives `acp-conductor` with 0, 1 and 3 pass-through
proxies in front of a raw mirror agent, each a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from asyncio.subprocess import Process
from pathlib import Path

import pytest
from acp_runtime.jsonrpc import Connection, RpcError, relay, spawn
from chain_support import CONDUCTOR, PERMISSION, RawClient, chain_env, conductor, script

pytestmark = pytest.mark.timeout(60)

ODD = {
    "protocolVersion": 2,
    "clientCapabilities": {"fs": {"readTextFile": True}, "_vendor": {"x": [1, 2.5, None]}},
    "_meta": {"trace": "abc", "nested": {"deep": True}},
    "unknownField": {"kept": "as is"},
}


IN_PROCESS = "object:passthrough_proxy:Proxy"  # `Proxy()` run inside the conductor
TYPED = "typed_passthrough_proxy.py"  # the generated `acp_v2_draft.Proxy()`: typed, no hook
TYPED_IN_PROCESS = "object:acp_v2_draft:Proxy"

# Values a re-encoding could change: key order, unicode, big and odd numbers, escapes.
EXACT = {
    "zeta": 1,
    "alpha": {"_meta": {"z": [3, 2, 1], "a": None}, "\u00e9t\u00e9": '\U0001f600 \\ " \n'},
    "big": 2**62 + 1,
    "tiny": 1e-300,
    "float": 2.5,
    "neg": -0.0,
    "_meta": {"trace": "abc"},
}


@pytest.mark.parametrize(
    "proxies",
    [
        [],
        ["passthrough_proxy.py"] * 3,
        [IN_PROCESS, "passthrough_proxy.py", IN_PROCESS],
        [TYPED, TYPED_IN_PROCESS],
    ],
    ids=["no-proxy", "3-processes", "mixed-in-process", "typed-without-hooks"],
)
async def test_messages_pass_unchanged_through_the_chain(proxies: list[str]) -> None:
    client = RawClient()
    connection, process = await spawn(conductor(proxies), client, {}, env=chain_env())
    await _exercise(client, connection, process)


async def test_a_conductor_in_proxy_mode_nests_a_chain() -> None:
    """An `acp-conductor` without `--agent` is a proxy: its chain runs inside the outer one."""
    inner = [CONDUCTOR, "--proxy", shlex.join(script("passthrough_proxy.py"))]
    inner += ["--proxy-object", IN_PROCESS.removeprefix("object:")]
    outer = [
        CONDUCTOR,
        "--proxy",
        shlex.join(inner),
        "--agent",
        shlex.join(script("mirror_agent.py")),
    ]
    client = RawClient()
    connection, process = await spawn(outer, client, {}, env=chain_env())
    await _exercise(client, connection, process)


async def _exercise(client: RawClient, connection: Connection, process: Process) -> None:
    async with connection:
        # initialize reaches the agent as `initialize` (the proxies got proxy/initialize)
        init = await connection.request("initialize", ODD, None)
        assert init == {"method": "initialize", "params": ODD}
        # unknown methods, `_meta` and unknown fields, extension or not
        for method in ("_vendor/thing", "future/method", "session/new"):
            answer = await connection.request(method, ODD, None)
            answer.pop("sessionId", None)
            assert answer == {"method": method, "params": ODD}
        # each value as sent, key order included, for methods the typed proxy's models know
        # (whose params these are not valid for: the pass-through path does not validate)
        exact = {**EXACT, "sessionId": "s1"}
        for method in ("session/new", "session/set_mode", "_vendor/exact"):
            answer = await connection.request(method, exact, None)
            answer.pop("sessionId", None)  # the session/new answer's own
            assert json.dumps(answer) == json.dumps({"method": method, "params": exact})
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


@pytest.mark.parametrize(
    "proxies",
    [["passthrough_proxy.py", IN_PROCESS], [TYPED, TYPED_IN_PROCESS]],
    ids=["untyped", "typed-without-hooks"],
)
async def test_cancellation_crosses_every_hop(proxies: list[str]) -> None:
    client = RawClient()
    connection, process = await spawn(conductor(proxies), client, {}, env=chain_env())
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        # relay: on cancellation, send $/cancel_request and still take the answer
        slow = asyncio.create_task(relay(connection, "_slow", {"which": "one"}))
        await connection.request("_seen", None, None)  # the slow request is on its way
        await asyncio.sleep(0.2)  # let it reach the agent (not a timing assertion)
        slow.cancel()
        assert await client.wait_for("_saw_cancel") == {"which": "one"}
        # every hop passed the cancellation on and relayed the agent's own answer back
        assert await asyncio.wait_for(slow, 10) == {"cancelled": "answered by the agent"}
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


@pytest.mark.parametrize("as_conductor", [False, True], ids=["proxy", "conductor-in-proxy-mode"])
async def test_a_proxy_refuses_plain_initialize(as_conductor: bool) -> None:
    command = script("passthrough_proxy.py")
    if as_conductor:
        command = [CONDUCTOR, "--proxy", shlex.join(command)]
    connection, process = await spawn(command, RawClient(), {}, env=chain_env())
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


async def test_a_flood_of_updates_does_not_lock_the_chain() -> None:
    """Updates loop through each proxy's one connection (in wrapped, out plain): with output
    backed up both ways, a connection that stopped reading would hold the chain forever."""
    client = RawClient()
    command = conductor(["passthrough_proxy.py", IN_PROCESS])
    connection, process = await spawn(command, client, {}, env=chain_env())
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        prompt = {"sessionId": "s1", "prompt": [], "_updates": 6000}
        answer = await asyncio.wait_for(connection.request("session/prompt", prompt, None), 25)
        assert answer["permission"] == PERMISSION
        updates = [p["update"]["n"] for m, p in client.notes if m == "session/update"]
        assert updates == list(range(6000))
    assert await asyncio.wait_for(process.wait(), 15) == 0


@pytest.mark.parametrize(
    "talking", ["talking_proxy.py", "object:talking_proxy:TalkingProxy"], ids=["process", "inside"]
)
async def test_a_proxy_answers_and_sends_messages_of_its_own(talking: str) -> None:
    client = RawClient()
    command = conductor([talking, "passthrough_proxy.py"])
    connection, process = await spawn(command, client, {}, env=chain_env())
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        # answered by the proxy itself: the agent (which mirrors every request) never sees it
        local = await connection.request("_proxy/version", {"x": 1}, None)
        assert local == {"proxy": "talking", "asked": {"x": 1}}
        answer = await connection.request(
            "session/prompt", {"sessionId": "s1", "prompt": [], "_updates": 1}, None
        )
        seen = await connection.request("_seen", None, None)
    assert await asyncio.wait_for(process.wait(), 15) == 0
    # its own request to each side came back with that side's answer
    assert answer["proxyAsked"] == {
        "agent": {"method": "_probe", "params": {"q": 1}},
        "client": PERMISSION,  # what the RawClient answers every request with
    }
    assert ("_proxy/ask", {"q": 2}) in client.requests
    # its own notification reached the client before the agent's updates of that prompt
    updates = [params["update"] for method, params in client.notes if method == "session/update"]
    assert updates[0] == {"sessionUpdate": "agent_message_chunk", "from": "proxy"}
    assert updates[1]["n"] == 0
    # and its own notification reached the agent, through the pass-through proxy behind it
    assert ["_proxy/hello", {"sessionId": "s1"}] in seen


async def test_a_proxy_that_exits_ends_the_chain_and_its_waiting_request_says_so(
    tmp_path: Path,
) -> None:
    client = RawClient()
    command = conductor(["passthrough_proxy.py", "talking_proxy.py"])
    connection, process = await spawn(command, client, {}, env=chain_env(PROXY_PIDS=str(tmp_path)))
    async with connection:
        await connection.request("initialize", {"protocolVersion": 2}, None)
        with pytest.raises(RpcError) as gone:
            await connection.request("_proxy/exit", None, None)
    # the request waiting on the proxies is answered -32603, naming the one that died (not
    # proxy 1, which held the request and was stopped because of it)
    assert gone.value.code == -32603
    assert (
        gone.value.message.startswith("the proxy 2 (") and "talking_proxy.py" in gone.value.message
    )
    assert await asyncio.wait_for(process.wait(), 15) == 1
    for pid in [int(p.name) for p in tmp_path.iterdir()]:  # the other proxy was stopped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
