"""MCP over ACP with peers nobody here wrote: the reference TypeScript SDK's own MCP-over-ACP
binding (`McpOverAcpCaller` in an agent, `mcp_agent.mjs`; `McpOverAcpProvider` in a client,
`mcp_client.mjs`), which speaks MCP 2026-07-28 inside `mcp/message`, against ours (an `mcp` SDK
server a proxy provides, `Proxy.provide_mcp`; an `mcp` SDK client session, `mcp_over_acp`; the
conductor's relay and its stdio bridge). Every part a process over real pipes.

- the SDK agent calls a tool our proxy serves, through our conductor (and gets the tool's
  progress notifications);
- our agent calls a tool the SDK client serves;
- the SDK agent calls a tool the SDK client serves, through our conductor and a pass-through
  proxy (the conductor relays `mcp/message` both ways, untouched), and our stdio-only agent calls
  it through the conductor's bridge.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.interop.chains import INTEROP, PROXIES, ours, scripts_env
from tests.interop.chains import conductor as _chain

pytest.importorskip("mcp")

TIMEOUT = 60.0

pytestmark = pytest.mark.timeout(90)


def _record(argv: list[str]) -> dict[str, Any]:
    """Run a driver script (its stdout is one JSON record) and check that it went well."""
    done = subprocess.run(
        argv,
        cwd=INTEROP,
        env=scripts_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    try:
        record: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    except (ValueError, IndexError):
        pytest.fail(f"{argv[1]}: no JSON record\n{done.stdout}\n--- stderr\n{done.stderr}")
    assert record.get("ok", True), f"{record['error']}\n--- stderr\n{done.stderr}"
    assert done.returncode == 0, done.stderr
    return record


def test_the_sdk_agent_calls_a_tool_our_proxy_serves(node: str, tmp_path: Path) -> None:
    frames = tmp_path / "frames.jsonl"
    agent = shlex.join([node, str(INTEROP / "mcp_agent.mjs"), "--frames", str(frames)])
    chain = _chain(agent, ours("tools_proxy.py"))
    prompts = ["add 2 40", "mul 2 3", "count 3"]
    record = _record([sys.executable, str(PROXIES / "prompt_once.py"), *prompts, "--", *chain])
    # the SDK's caller found the server our proxy added to session/new, listed its tools
    # (ours: an `mcp` SDK MCPServer) and called one; an unknown tool is the SDK agent's own answer
    assert record["said"][:2] == ["calc: 42", "calc: no tool mul"]
    assert record["said"][2].startswith("calc: 3")
    # the tool's progress (asked for with a progressToken) reached the SDK agent as mcp/message
    # notifications of that request, in order, before its answer. (How many of them the SDK's
    # caller hands to its listener is its own affair: it drops those it has not processed when
    # the answer settles the request, often all but the first.)
    received = [json.loads(line) for line in frames.read_text().splitlines()]
    received = [f["msg"] for f in received if f["dir"] == "in"]
    calls = [m for m in _sent(frames) if m.get("params", {}).get("method") == "tools/call"]
    last = calls[-1]
    progress = [
        m["params"]["params"]["progress"]
        for m in received
        if m.get("method") == "mcp/message"
        and m["params"]["requestId"] == last["params"]["requestId"]
    ]
    answered = next(
        i for i, m in enumerate(received) if m.get("id") == last["id"] and "method" not in m
    )
    notes = [i for i, m in enumerate(received) if m.get("method") == "mcp/message"]
    assert progress == [1, 2, 3] and max(notes) < answered


def _sent(frames: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in frames.read_text().splitlines()]
    return [r["msg"] for r in records if r["dir"] == "out" and "msg" in r]


def test_our_agent_calls_a_tool_the_sdk_client_serves(node: str) -> None:
    record = _record([node, "mcp_client.mjs", sys.executable, str(PROXIES / "mcp_agent.py")])
    assert record["said"] == ["add: 42"]
    # our `mcp` SDK client session speaks the revision the SDK's binding requires
    assert [m["method"] for m in record["mcp"]] == ["server/discover", "tools/list", "tools/call"]
    assert {m["protocolVersion"] for m in record["mcp"]} == {"2026-07-28"}


@pytest.mark.parametrize("agent", ["sdk agent, native", "our stdio-only agent, bridged"])
def test_a_tool_the_sdk_client_serves_reaches_the_agent_through_our_conductor(
    node: str, agent: str
) -> None:
    if agent.startswith("sdk"):
        chain = _chain(shlex.join([node, "mcp_agent.mjs"]), ours("passthrough_proxy.py"))
        prompts = ["--prompt", "add 2 40", "--prompt", "mul 2 3"]
        expected = ["calc: 42", "calc: no tool mul"]
    else:
        chain = _chain(ours("stdio_mcp_agent.py"))
        prompts, expected = [], ["calc: 42"]
    record = _record([node, "mcp_client.mjs", *prompts, *chain])
    assert record["said"] == expected
    assert "tools/call" in [m["method"] for m in record["mcp"]]
    # the chain said it supports ACP MCP servers, natively or through its bridge
    assert record["initialize"]["capabilities"]["session"]["mcp"]["acp"] == {}
