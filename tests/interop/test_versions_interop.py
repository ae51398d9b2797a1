"""ACP v1 and v2 on one agent command, and one client for both, against peers nobody here wrote.

* The reference TypeScript SDK's v1 client (default import, `v1_client.mjs`) and v2 client
  (`/experimental/v2/unstable`, `v2_client.mjs`), and the PyPI `agent-client-protocol` v1 client
  (`pypi_client.py`) drive one scaffolded two-version agent command (`python -m interop_agent`).
* The scaffolded client drives a TypeScript v1 agent (`v1_agent.mjs`), a TypeScript v2 agent
  (`v2_agent.mjs`) and a PyPI-SDK agent (`pypi_agent.py`), each written with its SDK's public API.

Each run covers initialize, session/new, a prompt with streamed output, a permission request
and a cancellation, over the real stdio pipes of separate processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_fork import run_acp_codegen

from acp_codegen.sources import project_root
from tests.interop.processes import interrupt_after

INTEROP = Path(__file__).resolve().parent
ROOT = project_root()
TIMEOUT = 90.0  # a guard against a hang, never an assertion about speed
PROMPT = "Hello! Ask my permission first."


def scaffold(kind: str, directory: Path) -> None:
    """`acp-codegen scaffold KIND DIR` with the defaults (v1 and v2)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    status, out, err = run_acp_codegen(["scaffold", kind, str(directory)], ROOT, env, 600)
    assert status == 0, out + err


def agent_command(projects: dict[str, Path]) -> list[str]:
    """The scaffolded agent as one command (it finds its package through PYTHONPATH)."""
    return ["env", f"PYTHONPATH={projects['agent']}", sys.executable, "-m", "interop_agent"]


def pypi_sdk() -> None:
    """Skip unless the PyPI SDK (the test extra's `agent-client-protocol`) is installed."""
    pytest.importorskip(
        "acp", reason="the PyPI agent-client-protocol SDK (test extra) is not installed"
    )


def record_of(done: subprocess.CompletedProcess[str], script: str) -> dict[str, Any]:
    """The one JSON record a driver script printed."""
    try:
        record: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pytest.fail(
            f"{script} printed no record (exit {done.returncode})\n{done.stdout}\n{done.stderr}"
        )
    return record


def assert_v1_lifecycle(record: dict[str, Any]) -> None:
    """The three v1 turns: allowed tool call, cancelled stream, cancelled during permission."""
    context = json.dumps({k: v for k, v in record.items() if k != "frames"}, indent=1)[:20000]
    assert record["ok"], context
    assert record["initialize"]["protocolVersion"] == 1, context
    assert record["initialize"]["agentInfo"]["name"] == "interop-agent", context
    assert [p["stopReason"] for p in record["prompts"]] == [
        "end_turn",
        "cancelled",
        "cancelled",
    ], context
    events = record["events"]
    ends = [i for i, e in enumerate(events) if e["kind"] == "prompt_done"]
    first = events[: ends[0]]
    kinds = [e.get("sessionUpdate") or e["kind"] for e in first]
    assert (
        kinds.index("agent_thought_chunk")
        < kinds.index("agent_message_chunk")
        < kinds.index("tool_call")
    )
    assert kinds.index("tool_call") < kinds.index("permission") < kinds.index("tool_call_update")
    assert (
        "".join(e["text"] for e in first if e.get("sessionUpdate") == "agent_message_chunk")
        == "ask permission then echo"
    )
    assert [e.get("status") for e in first if e.get("sessionUpdate") == "tool_call_update"][
        -1
    ] == "completed"
    second = events[ends[0] + 1 : ends[1]]
    echoed = [e for e in second if e.get("sessionUpdate") == "agent_message_chunk"]
    assert 3 <= len(echoed) < 200 and any(e["kind"] == "cancel_sent" for e in second), context
    third = events[ends[1] + 1 : ends[2]]
    assert [e["kind"] for e in third if e["kind"] != "update"] == [
        "prompt_sent",
        "permission",
        "cancel_sent",
    ], context
    assert not any(e.get("status") == "completed" for e in third), context  # the tool never ran


def test_the_ts_v1_client_drives_the_two_version_agent(
    node: str, projects: dict[str, Path]
) -> None:
    done = subprocess.run(
        [node, str(INTEROP / "v1_client.mjs"), *agent_command(projects)],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    record = record_of(done, "v1_client.mjs")
    assert_v1_lifecycle(record)
    sent = [f["msg"] for f in record["frames"] if f["dir"] == "out"]
    assert sent[0]["method"] == "initialize" and sent[0]["params"]["protocolVersion"] == 1


def test_the_pypi_client_drives_the_two_version_agent(projects: dict[str, Path]) -> None:
    pypi_sdk()
    done = subprocess.run(
        [sys.executable, str(INTEROP / "pypi_client.py"), *agent_command(projects)],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert_v1_lifecycle(record_of(done, "pypi_client.py"))


def test_the_ts_v2_client_drives_the_same_agent_command(
    node: str, projects: dict[str, Path]
) -> None:
    done = subprocess.run(
        [node, str(INTEROP / "v2_client.mjs"), "--scenario", "lifecycle", *agent_command(projects)],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    record = record_of(done, "v2_client.mjs")
    context = json.dumps({k: v for k, v in record.items() if k != "frames"}, indent=1)[:20000]
    assert record["ok"], context
    assert (
        record["initialize"]["protocolVersion"] == 2
        and record["initialize"]["info"]["name"] == "interop-agent"
    )
    kinds = [e.get("sessionUpdate") or e["kind"] for e in record["events"]]
    for expected in (
        "user_message",
        "agent_message_chunk",
        "permission",
        "tool_call_content_chunk",
        "cancel_sent",
    ):
        assert expected in kinds, context
    idles = [
        e.get("stopReason")
        for e in record["events"]
        if e.get("sessionUpdate") == "state_update" and e.get("state") == "idle"
    ]
    assert idles == ["end_turn", "cancelled"], context


AGENTS = {
    "ts-v1": (["v1_agent.mjs"], 1, "SDK v1 Echo Agent 1.0.0"),
    "ts-v2": (["v2_agent.mjs"], 2, "sdk-echo-agent 1.0.0"),
    "pypi-v1": (["pypi_agent.py"], 1, "PyPI Echo Agent 1.0.0"),
}


def peer_agent(name: str, node: str | None) -> list[str]:
    """The command of one agent written with another SDK."""
    script = INTEROP / AGENTS[name][0][0]
    return (
        [node or "node", str(script)] if script.suffix == ".mjs" else [sys.executable, str(script)]
    )


def client_command(projects: dict[str, Path], *args: str) -> tuple[list[str], dict[str, str]]:
    """The scaffolded client's command line and environment."""
    env = {**os.environ, "PYTHONPATH": str(projects["client"]), "NO_COLOR": "1", "COLUMNS": "200"}
    return [sys.executable, "-m", "interop_client", *args], env


@pytest.fixture(params=sorted(AGENTS))
def other_agent(request: pytest.FixtureRequest, node: str) -> tuple[str, list[str]]:
    """One agent built on another SDK (the PyPI one skips when that SDK is absent)."""
    if request.param.startswith("pypi"):
        pypi_sdk()
    return request.param, peer_agent(request.param, node)


def test_the_scaffolded_client_drives_agents_of_other_sdks(
    projects: dict[str, Path], other_agent: tuple[str, list[str]], tmp_path: Path
) -> None:
    name, command = other_agent
    transcript = tmp_path / "t.jsonl"
    argv, env = client_command(
        projects, "--yes", "--transcript", str(transcript), PROMPT, "--", *command
    )
    done = subprocess.run(
        argv,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert lines[:2] == [f"connected to {AGENTS[name][2]}", f"you: {PROMPT}"], lines
    assert "  → Allow" in lines and lines[-1] == "idle (end_turn)", lines
    assert any(line.startswith("agent: ") for line in lines), lines
    recorded = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    assert recorded[0]["message"]["params"]["protocolVersion"] == 2  # it asks for the newest
    answer = next(
        e["message"]
        for e in recorded
        if e["from"] == "agent" and e["message"].get("id") == "initialize"
    )
    assert answer["result"]["protocolVersion"] == AGENTS[name][1]


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGINT")
def test_ctrl_c_in_the_scaffolded_client_cancels_the_turn_of_agents_of_other_sdks(
    projects: dict[str, Path], other_agent: tuple[str, list[str]], tmp_path: Path
) -> None:
    _, command = other_agent
    argv, env = client_command(projects, " ".join(["slow"] * 400), "--", *command)
    status, printed, errors = interrupt_after(
        argv, b"agent: slow", cwd=tmp_path, env=env, timeout=TIMEOUT
    )
    assert status == 130, printed + errors
    assert "cancelling…" in printed and printed.rstrip().endswith("idle (cancelled)"), printed
