"""Interop of our proxy chain with peers nobody here wrote: the reference TypeScript SDK's v2 client
(`v2_client.mjs`) drives its own v2 agent (`v2_agent.mjs`), and its v1 client its v1 agent, through
`acp-conductor` and two of our pass-through proxies (tests/proxies/passthrough_proxy.py), every
part a process over real pipes; and `@thinkwell/conductor` runs our proxies.

The client sees exactly the prompt lifecycle it sees directly, and `$/cancel_request` crosses every
hop both ways: the SDK agent withdraws its pending permission request, each hop passes the
cancellation on, and the SDK client's `cancelled` answer is relayed back to the agent (not a -32800
of a hop's own).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
from typing import Any

import pytest

from tests.interop.chains import INTEROP, PROXIES, conductor, ours, scripts_env

SCRIPT_TIMEOUT = 60.0

pytestmark = pytest.mark.timeout(90)


def _run(node: str, scenario: str | None, version: int = 2) -> dict[str, Any]:
    proxy = ours("passthrough_proxy.py")
    agent = shlex.join([node, str(INTEROP / f"v{version}_agent.mjs")])
    chain = conductor(agent, proxy, proxy)
    env = scripts_env()
    options = [] if scenario is None else ["--scenario", scenario]
    done = subprocess.run(
        [node, str(INTEROP / f"v{version}_client.mjs"), *options, *chain],
        cwd=INTEROP,
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        check=False,
    )
    try:
        record: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"v2_client.mjs: no JSON record\n{done.stdout}\n--- stderr\n{done.stderr}")
    assert record["ok"], f"{record['error']}\n--- stderr\n{done.stderr}"
    assert done.returncode == 0 and record.get("agentExit", {"code": 0, "signal": None}) == {
        "code": 0,
        "signal": None,
    }
    return record


def _updates(record: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for event in record["events"]:
        if event["kind"] == "update":
            tag = event["sessionUpdate"]
            if tag == "agent_message_chunk":
                out.append(("chunk", event["text"]))
            elif tag == "state_update":
                out.append(("state", event["state"], event.get("stopReason")))
            else:
                out.append((tag,))
        elif event["kind"] in ("permission", "cancel_sent"):
            out.append((event["kind"],))
    return out


def test_sdk_client_and_agent_through_our_chain(node: str) -> None:
    record = _run(node, "lifecycle")
    assert record["initialize"]["info"] == {"name": "sdk-echo-agent", "version": "1.0.0"}
    updates = _updates(record)
    first = updates[: updates.index(("state", "idle", "end_turn")) + 1]
    assert first == [
        ("user_message",),
        ("state", "running", None),
        ("state", "requires_action", None),
        ("permission",),
        ("state", "running", None),
        ("chunk", "selected:allow"),  # the SDK client's answer reached the SDK agent
        ("chunk", "ask"),
        ("chunk", "permission"),
        ("chunk", "then"),
        ("chunk", "echo"),
        ("_vendor_ping",),  # a custom update variant, passed through untouched
        ("state", "idle", "end_turn"),
    ]
    assert updates[-1] == ("state", "idle", "cancelled")  # session/cancel crossed the chain


def test_cancel_request_crosses_our_chain_and_the_answer_comes_back(node: str) -> None:
    updates = _updates(_run(node, "cancel-permission"))
    assert updates[-3:] == [
        ("cancel_sent",),
        ("chunk", "cancelled"),  # the SDK client's `cancelled` outcome, relayed by every hop
        ("state", "idle", "cancelled"),
    ]


@pytest.mark.slow  # nox -s slow / interop: the CI budget leaves it out
def test_sdk_v1_client_and_agent_through_our_chain(node: str) -> None:
    """The SDK's stable v1 API (what editors use today) on both ends: three prompt turns, a
    permission answered, two cancellations, all through the conductor and two proxies."""
    record = _run(node, None, version=1)
    assert record["initialize"]["agentInfo"]["name"] == "sdk-v1-echo-agent"
    assert [p["stopReason"] for p in record["prompts"]] == ["end_turn", "cancelled", "cancelled"]
    kinds = [event["kind"] for event in record["events"]]
    assert kinds.count("permission") == 2 and kinds.count("cancel_sent") == 2


THINKWELL = INTEROP / "node_modules" / "@thinkwell" / "conductor"


@pytest.mark.slow  # nox -s slow / interop: the CI budget leaves it out
async def test_our_proxies_under_the_thinkwell_conductor(node: str) -> None:
    """`@thinkwell/conductor` 0.5.7 (npm, TypeScript) runs two of our proxies in front of our mirror
    agent. It speaks the RFD's earlier draft (`initialize` with `_meta.proxy: true`,
    `_proxy/successor/*` envelopes), which our `Proxy` answers in kind."""
    if not THINKWELL.exists():
        pytest.skip("@thinkwell/conductor is not installed in tests/interop (npm install)")
    sys.path.insert(0, str(PROXIES))
    from acp_runtime.jsonrpc import spawn
    from chain_support import PERMISSION, RawClient, chain_env

    proxy = {"command": sys.executable, "args": [str(PROXIES / "passthrough_proxy.py")]}
    agent = {"command": sys.executable, "args": [str(PROXIES / "mirror_agent.py")]}
    chain = json.dumps([proxy, proxy, agent])
    command = [node, str(INTEROP / "thinkwell_conductor.mjs"), chain]
    client = RawClient()
    connection, process = await spawn(command, client, {}, env=chain_env(), cwd=INTEROP)
    async with connection:
        init = await connection.request("initialize", {"protocolVersion": 2}, None)
        assert init["method"] == "initialize", init  # the agent got `initialize`
        assert init["_meta"] == {"proxy": True}  # our proxy's answer in the earlier draft's kind
        odd = {"a": [1, 2.5, None], "_meta": {"trace": "t"}}
        assert await connection.request("_vendor/x", odd, None) == {
            "method": "_vendor/x",
            "params": odd,
        }
        prompt = {"sessionId": "s1", "prompt": [], "_updates": 20}
        answer = await connection.request("session/prompt", prompt, None)
        assert answer["permission"] == PERMISSION
        updates = [p["update"]["n"] for m, p in client.notes if m == "session/update"]
        assert updates == list(range(20))
    assert await asyncio.wait_for(process.wait(), 15) == 0
