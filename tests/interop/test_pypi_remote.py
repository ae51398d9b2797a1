"""The PyPI SDK `agent-client-protocol` 1.0.0rc3 over its remote transports (issue 33, item 2),
both directions, against the RFD "Streamable HTTP & WebSocket Transport" as we serve and speak it.

* Its client (`pypi_client.py --url`: `acp.ws.create_websocket_stream` or
  `acp.http.create_http_stream`, then `acp.connect_to_agent`) drives our scaffolded agent served
  by `--listen`, through pypi_client.py's three v1 turns (a permission allowed, a stream
  cancelled, a permission during which the client cancels); its experimental v2 client
  (`pypi_v2_client.py`, `acp.experimental.v2`) through two v2 turns (a permission allowed, a
  stream cancelled), each ended by the agent's idle state.
* Our scaffolded client (`-- ws://...` / `-- http://...`, which is `acp_runtime.remote.open_url`)
  drives pypi_agent.py's echo agent served by the SDK's own Starlette app
  (`acp.http.asgi.create_asgi_app`) under uvicorn: a prompt with a permission request to its end,
  and a prompt cancelled by Ctrl-C; and `connect_ws` / `connect_http` themselves (by URL, in this
  process, a generated `acp_v1` client handler): the same turn, then one cancelled by
  session/cancel after its third chunk.

The SDK's known defect, asserted as such: its HTTP client POSTs its answers to the agent's
requests (`session/request_permission`) without `Acp-Session-Id`, which the RFD requires on
"permission responses"; our server answers 400 as the RFD says, so the turn hangs; with
`correlate_responses_by_id=True` (`our_remote_agent.py`) the whole lifecycle goes through. Its HTTP
client also speaks HTTP/1.1 to an `http://` endpoint (no HTTP/2 with prior knowledge), which the
RFD's "MUST use HTTP/2" excludes; our server takes HTTP/1.1, so nothing breaks.

The SDK with its `http` extra and uvicorn has a venv of its own (`peers/pypi-acp-1.0-remote.txt`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.peer_envs import python_peer
from tests.interop.processes import interrupt_after
from tests.interop.test_versions_interop import assert_v1_lifecycle, record_of

# The PyPI SDK 1.0.0rc3 over its remote transports: `nox -s interop` (and `nox -s slow`); the
# README's test command keeps its stdio peers (test_third_party.py) within CI's time budget.
pytestmark = pytest.mark.slow

INTEROP = Path(__file__).resolve().parent
GENERATED = str(INTEROP.parents[1] / "generated")
if GENERATED not in sys.path:  # the generated packages, as tests/remote imports them
    sys.path.insert(0, GENERATED)
TIMEOUT = 60.0  # a guard against a hang, never an assertion about speed
PROMPT = "Hello! Ask my permission first."


def free_port() -> int:
    """A local TCP port nobody listens on (right now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(argv: list[str], port: int, log: Path, env: dict[str, str]) -> Iterator[str]:
    """`argv` (a server on 127.0.0.1:`port`) for the block, once it accepts connections: the
    endpoint's host:port/acp."""
    with log.open("wb") as errors:
        process = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=errors, stderr=errors, cwd=log.parent
        )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{argv} never listened:\n{log.read_text(errors='replace')}")
                time.sleep(0.05)
        yield f"127.0.0.1:{port}/acp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def rc3() -> Path:
    """The bin directory of the SDK 1.0.0rc3 with its `http` extra and uvicorn."""
    return python_peer("pypi-acp-1.0-remote")


@pytest.fixture(scope="module")
def our_agent(projects: dict[str, Path]) -> Iterator[str]:
    """The scaffolded agent under `--listen`, as its users start it."""
    port = free_port()
    argv = [sys.executable, "-m", "interop_agent", "--listen", f"127.0.0.1:{port}"]
    env = {**os.environ, "PYTHONPATH": str(projects["agent"])}
    with serving(argv, port, projects["agent"].parent / "listen.log", env) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def our_correlating_agent(projects: dict[str, Path]) -> Iterator[str]:
    """The same agent served with `correlate_responses_by_id=True`."""
    port = free_port()
    argv = [sys.executable, str(INTEROP / "our_remote_agent.py"), "interop_agent", str(port)]
    env = {**os.environ, "PYTHONPATH": str(projects["agent"])}
    with serving(argv, port, projects["agent"].parent / "correlating.log", env) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def rc3_agent(rc3: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """pypi_agent.py's echo agent served by the SDK's own ASGI app under uvicorn."""
    port = free_port()
    argv = [str(rc3 / "python"), str(INTEROP / "pypi_remote_agent.py"), str(port)]
    log = tmp_path_factory.mktemp("rc3-agent") / "server.log"
    with serving(argv, port, log, dict(os.environ)) as endpoint:
        yield endpoint


def rc3_client(rc3: Path, url: str, *step: str) -> dict[str, Any]:
    """pypi_client.py's three turns against `url`: its record."""
    done = subprocess.run(
        [str(rc3 / "python"), str(INTEROP / "pypi_client.py"), "--url", url, *step],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    record = record_of(done, f"pypi_client.py --url {url} (1.0.0rc3)")
    record["stderr"] = done.stderr[-4000:]
    return record


# ------------------------------------------------------------------ its client, our agent


def test_pypi_sdk_1_0_client_over_websocket_drives_our_listening_agent(
    rc3: Path, our_agent: str
) -> None:
    assert_v1_lifecycle(rc3_client(rc3, f"ws://{our_agent}"))


def test_pypi_sdk_1_0_http_client_omits_the_session_header_on_its_answers(
    rc3: Path, our_agent: str, projects: dict[str, Path]
) -> None:
    # its known defect: the answer to session/request_permission is POSTed without
    # Acp-Session-Id; our server refuses it (400, as the RFD says) and the turn never ends
    record = rc3_client(rc3, f"http://{our_agent}", "--step", "3")
    context = json.dumps(record, indent=1)[:12000]
    assert not record["ok"] and record["error"].startswith("TimeoutError"), context
    posts = [
        (e["message"], e["sessionHeader"], e["status"]) for e in record["http"] if "message" in e
    ]
    assert posts[:4] == [
        ("initialize", False, 200),
        ("session/new", False, 202),
        ("session/prompt", True, 202),
        ("response", False, 400),  # still the defect
    ], context
    assert [e["kind"] for e in record["events"] if e["kind"] != "update"] == [
        "prompt_sent",
        "permission",
    ], context
    # the streams work: everything up to the permission request came on the session stream
    first = [e.get("sessionUpdate") for e in record["events"] if e["kind"] == "update"]
    assert first[0] == "agent_thought_chunk" and "tool_call" in first, context
    # and over plain http:// it speaks HTTP/1.1 (the RFD wants HTTP/2; our server takes either)
    assert {e["httpVersion"] for e in record["http"]} == {"HTTP/1.1"}, context
    # the refusal stays in its background task (the agent is never told): its own log says so
    assert "AcpHttpStatusError: HTTP 400: POST None failed" in record["stderr"], context
    # it left (DELETE) while our agent's permission request was pending: no traceback here
    served = (projects["agent"].parent / "listen.log").read_text(errors="replace")
    assert record["http"][-1] == {"verb": "DELETE", "status": 202, "httpVersion": "HTTP/1.1"}
    assert "Traceback" not in served, served


def test_pypi_sdk_1_0_http_client_drives_our_agent_when_it_correlates_by_id(
    rc3: Path, our_correlating_agent: str
) -> None:
    record = rc3_client(rc3, f"http://{our_correlating_agent}")
    assert_v1_lifecycle(record)
    answers = [e for e in record["http"] if e.get("message") == "response"]
    assert len(answers) == 2 and all(
        not e["sessionHeader"] and e["status"] == 202 for e in answers
    ), record["http"]
    verbs = [e["verb"] for e in record["http"]]
    assert verbs.count("GET") == 2 and verbs[-1] == "DELETE", verbs  # two SSE streams, then bye


def rc3_v2_client(rc3: Path, url: str) -> dict[str, Any]:
    """pypi_v2_client.py's two v2 turns against `url`: its record."""
    done = subprocess.run(
        [str(rc3 / "python"), str(INTEROP / "pypi_v2_client.py"), url],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return record_of(done, f"pypi_v2_client.py {url} (1.0.0rc3)")


def assert_v2_turns(record: dict[str, Any]) -> None:
    """A v2 session with our agent: a turn with a permission allowed, then one cancelled."""
    context = json.dumps(record, indent=1)[:12000]
    assert record["ok"], context
    assert record["initialize"]["protocolVersion"] == 2, context
    assert record["initialize"]["info"]["name"] == "interop-agent", context
    events = record["events"]
    states = [(e["state"], e.get("stopReason")) for e in events if "state" in e]
    assert states == [
        ("running", None),
        ("requires_action", None),  # the permission request ...
        ("running", None),  # ... answered
        ("idle", "end_turn"),
        ("running", None),
        ("idle", "cancelled"),  # session/cancel honoured
    ], context
    second = events.index({"kind": "prompt_sent"}, 1)
    first = events[:second]
    assert {"kind": "permission", "options": ["allow", "reject"]} in first, context
    text = "".join(e["text"] for e in first if e.get("sessionUpdate") == "agent_message_chunk")
    assert text == "ask permission then echo", context
    statuses = [e.get("status") for e in first if e.get("sessionUpdate") == "tool_call_update"]
    assert statuses[-1] == "completed", context
    echoed = [e for e in events[second:] if e.get("sessionUpdate") == "agent_message_chunk"]
    assert {"kind": "cancel_sent"} in events[second:] and 3 <= len(echoed) < 200, context


def test_pypi_sdk_1_0_v2_client_over_websocket_drives_our_listening_agent(
    rc3: Path, our_agent: str
) -> None:
    assert_v2_turns(rc3_v2_client(rc3, f"ws://{our_agent}"))


def test_pypi_sdk_1_0_v2_http_client_drives_our_agent_when_it_correlates_by_id(
    rc3: Path, our_correlating_agent: str
) -> None:
    # its v2 client shares the v1 one's HTTP transport, and its defect: without the correlation
    # the permission turn hangs as above
    assert_v2_turns(rc3_v2_client(rc3, f"http://{our_correlating_agent}"))


# ------------------------------------------------------------------ our client, its agent


def client_argv(projects: dict[str, Path], prompt: str, url: str, *options: str) -> list[str]:
    """The scaffolded client on `url`."""
    return [sys.executable, "-m", "interop_client", *options, prompt, "--", url]


def client_env(projects: dict[str, Path]) -> dict[str, str]:
    """The scaffolded client's environment (its package on the path, a wide console)."""
    return {**os.environ, "PYTHONPATH": str(projects["client"]), "COLUMNS": "200"}


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_our_client_drives_the_pypi_sdk_1_0_remote_agent(
    projects: dict[str, Path], rc3_agent: str, scheme: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "client.jsonl"
    done = subprocess.run(
        client_argv(
            projects,
            PROMPT,
            f"{scheme}://{rc3_agent}",
            "--yes",
            "--transcript",
            str(transcript),
        ),
        cwd=tmp_path,
        env=client_env(projects),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0] == "connected to PyPI Echo Agent 1.0.0" and lines[-1] == "idle (end_turn)"
    ), lines
    assert f"agent: {PROMPT}" in lines and "  → Allow" in lines, lines
    assert "⚙ Count the words [completed]" in lines, lines
    recorded = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    sent = [e["message"] for e in recorded if e["from"] == "client"]
    got = [e["message"] for e in recorded if e["from"] == "agent"]
    assert [m.get("method") for m in sent] == ["initialize", "session/new", "session/prompt", None]
    assert sent[0]["params"]["protocolVersion"] == 2  # asked for v2 ...
    assert got[0]["result"]["protocolVersion"] == 1  # ... and went on in v1, as offered
    request = next(m for m in got if m.get("method") == "session/request_permission")
    assert sent[-1] == {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }
    chunks = [
        m["params"]["update"]["content"]["text"]
        for m in got
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(chunks) == PROMPT and len(chunks) == len(PROMPT.split())  # streamed
    assert got[-1]["result"] == {"stopReason": "end_turn"}


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_ctrl_c_in_our_client_cancels_the_turn_of_the_pypi_sdk_1_0_remote_agent(
    projects: dict[str, Path], rc3_agent: str, scheme: str, tmp_path: Path
) -> None:
    status, printed, errors = interrupt_after(
        client_argv(projects, " ".join(["slow"] * 400), f"{scheme}://{rc3_agent}"),
        b"agent: slow",
        cwd=tmp_path,
        env=client_env(projects),
        timeout=TIMEOUT,
    )
    assert status == 130, printed + errors
    assert "cancelling…" in printed and printed.rstrip().endswith("idle (cancelled)"), printed


def recorder() -> Any:
    """A v1 client handler of the generated `acp_v1`: records each update and permission request,
    allows the option called allow, and sends session/cancel after the third chunk when
    `cancel_after_three` is set."""
    import acp_v1

    class Recorder(acp_v1.Client):
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []
            self.cancel_after_three = False
            self.cancels: list[asyncio.Task[None]] = []

        async def session_update(self, params: acp_v1.SessionNotification) -> None:
            update = params.update.to_dict()
            self.events.append(update)
            chunks = [e for e in self.events if e.get("sessionUpdate") == "agent_message_chunk"]
            if self.cancel_after_three and len(chunks) == 3:
                self.cancel_after_three = False
                self.events.append({"kind": "cancel_sent"})
                cancel = acp_v1.CancelNotification.from_dict({"sessionId": params.session_id})
                self.cancels.append(asyncio.ensure_future(self.peer.session_cancel(cancel)))

        async def session_request_permission(
            self, params: acp_v1.RequestPermissionRequest
        ) -> acp_v1.RequestPermissionResponse:
            options = [o.option_id for o in params.options]
            self.events.append({"kind": "permission", "options": options})
            return acp_v1.RequestPermissionResponse.from_dict(
                {"outcome": {"outcome": "selected", "optionId": "allow"}}
            )

    return Recorder()


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_our_remote_client_api_drives_the_pypi_sdk_1_0_remote_agent(
    rc3_agent: str, scheme: str
) -> None:
    # `connect_ws` / `connect_http` (by URL) with a generated v1 client handler, in this process
    import acp_v1
    from acp_runtime import remote

    client = recorder()
    peer, connection = await remote.connect_url(f"{scheme}://{rc3_agent}", client)
    async with connection:
        init = await asyncio.wait_for(
            peer.initialize(
                acp_v1.InitializeRequest.from_dict(
                    {"protocolVersion": 1, "clientInfo": {"name": "ours", "version": "1"}}
                )
            ),
            TIMEOUT,
        )
        assert init.protocol_version == 1 and init.agent_info is not None
        assert init.agent_info.name == "pypi-echo-agent"
        session = await asyncio.wait_for(
            peer.session_new(acp_v1.NewSessionRequest.from_dict({"cwd": "/", "mcpServers": []})),
            TIMEOUT,
        )

        async def prompt(text: str) -> str:
            request = {"sessionId": session.session_id, "prompt": [{"type": "text", "text": text}]}
            answer = await asyncio.wait_for(
                peer.session_prompt(acp_v1.PromptRequest.from_dict(request)), TIMEOUT
            )
            return str(answer.to_dict()["stopReason"])

        assert await prompt("permission, then echo") == "end_turn"
        kinds = [e.get("sessionUpdate") or e["kind"] for e in client.events]
        assert kinds[0] == "agent_thought_chunk" and kinds.count("agent_message_chunk") == 3
        assert (
            kinds.index("tool_call") < kinds.index("permission") < kinds.index("tool_call_update")
        ), kinds
        assert client.events[-1]["status"] == "completed"  # the agent took our `allow`
        text = "".join(
            e["content"]["text"]
            for e in client.events
            if e.get("sessionUpdate") == "agent_message_chunk"
        )
        assert text == "permission, then echo"

        client.events.clear()
        client.cancel_after_three = True
        assert await prompt(" ".join(["slow"] * 200)) == "cancelled"  # session/cancel honoured
        echoed = [e for e in client.events if e.get("sessionUpdate") == "agent_message_chunk"]
        assert 3 <= len(echoed) < 200 and {"kind": "cancel_sent"} in client.events
