"""Interop with the reference implementation: the v2 API of the npm package @agentclientprotocol/sdk.

Both directions run the prompt lifecycle of the spec over a real pipe between two processes:

* the SDK's v2 client (`client()` -> `ClientApp.connect(stream)` -> `ClientConnection`, script
  `v2_client.mjs`) drives the generated Python echo agent (tests/dispatch/echo_agent.py);
* a generated Python `Client` (`acp_v2_draft.connect_agent`) drives an agent built on the SDK's
  v2 agent side (`agent()` -> `AgentApp.connect(stream)` -> `AgentConnection`, script
  `v2_agent.mjs`).

Each run covers initialize, session/new, a prompt accepted with a messageId, the user_message with
that id, state_update running, a permission request answered by the client, streamed
agent_message_chunks, state_update idle/end_turn, then a second prompt cancelled in the middle
with session/cancel (idle/cancelled). Failure messages carry the raw JSON-RPC frames.

`$/cancel_request` across the boundary, both ways:

* SDK client -> generated agent (cancelling_agent.py): a held prompt withdrawn with the SDK's
  `cancellationSignal` gets -32800 from the generated runtime; on session/cancel the generated
  agent withdraws its pending permission request and the SDK client answers `cancelled`.
* SDK agent -> generated client: on session/cancel the SDK agent withdraws its pending permission
  request; the schema wants the `cancelled` outcome as the answer (MethodSpec.cancelled).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parents[1]
GENERATED = ROOT / "generated"
ECHO_AGENT = ROOT / "tests" / "dispatch" / "echo_agent.py"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp

STEP_TIMEOUT = 10.0
SCRIPT_TIMEOUT = 40.0
PROMPT_1 = "ask permission then echo"
PROMPT_2 = " ".join(["slow"] * 200)


def _frames_text(frames: list[dict[str, Any]], limit: int = 80) -> str:
    lines = [json.dumps(frame, separators=(",", ":")) for frame in frames[:limit]]
    if len(frames) > limit:
        lines.append(f"... {len(frames) - limit} more frames")
    return "\n".join(lines)


# --------------------------------------------------------------------------- SDK client -> Python


def _run_sdk_client(
    node: str, agent: Path = ECHO_AGENT, scenario: str = "lifecycle"
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), str(agent.parent)])}
    try:
        done = subprocess.run(
            [
                node,
                str(INTEROP / "v2_client.mjs"),
                "--scenario",
                scenario,
                sys.executable,
                str(agent),
            ],
            cwd=INTEROP,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"v2_client.mjs did not finish within {SCRIPT_TIMEOUT} s: {exc}")
    try:
        record: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        pytest.fail(
            f"v2_client.mjs exited {done.returncode} without a JSON record\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
    record["stderr"] = done.stderr
    record["returncode"] = done.returncode
    return record


def _segments(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Events split at each `prompt_sent` marker (segment i = everything after prompt i was sent)."""
    segments: list[list[dict[str, Any]]] = []
    for event in events:
        if event["kind"] == "prompt_sent":
            segments.append([])
        elif segments:
            segments[-1].append(event)
    return segments


def _lifecycle(segment: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The observable lifecycle of one prompt, without the (unordered) prompt response."""
    out: list[tuple[Any, ...]] = []
    for event in segment:
        if event["kind"] == "permission":
            out.append(("permission", event["title"]))
        elif event["kind"] == "cancel_sent":
            out.append(("cancel_sent",))
        elif event["kind"] == "update":
            tag = event["sessionUpdate"]
            if tag == "user_message":
                out.append(("user_message", event["messageId"], event["text"]))
            elif tag == "state_update":
                out.append(("state", event["state"], event.get("stopReason")))
            elif tag == "agent_message_chunk":
                out.append(("chunk", event["text"]))
            else:
                out.append(("unknown", event.get("raw")))
    return out


def test_sdk_client_drives_generated_agent(node: str) -> None:
    record = _run_sdk_client(node)
    context = (
        f"error: {record['error']}\n--- node stderr\n{record['stderr']}\n"
        f"--- raw frames (out = SDK client -> Python agent)\n{_frames_text(record['frames'])}"
    )
    assert record["ok"], context
    assert record["returncode"] == 0, context
    assert record["sdkVersion"] == "2.4.0"
    assert record["initialize"]["protocolVersion"] == 2, context
    assert record["initialize"]["info"] == {"name": "echo", "version": "1.0"}, context
    assert record["agentExit"] == {"code": 0, "signal": None}, context  # EOF ends the agent

    first, second = _segments(record["events"])
    message_1 = record["prompts"][0]["messageId"]
    assert isinstance(message_1, str) and message_1, context
    assert {"kind": "prompt_accepted", "index": 0, "messageId": message_1} in first, context
    assert _lifecycle(first) == [
        ("user_message", message_1, PROMPT_1),
        ("state", "running", None),
        ("permission", "Run the pretend tool?"),
        ("chunk", "selected"),  # the outcome the SDK client chose, echoed by the agent
        ("chunk", "ask"),
        ("chunk", "permission"),
        ("chunk", "then"),
        ("chunk", "echo"),
        ("unknown", {"sessionUpdate": "_vendor_ping", "n": 1}),  # custom variant, passed through
        ("state", "idle", "end_turn"),
    ], context

    message_2 = record["prompts"][1]["messageId"]
    assert message_2 not in (None, message_1), context
    lifecycle = _lifecycle(second)
    assert lifecycle[:2] == [
        ("user_message", message_2, PROMPT_2[:57] + "..."),
        ("state", "running", None),
    ]
    cancel_at = lifecycle.index(("cancel_sent",))
    assert lifecycle[2:cancel_at] == [("chunk", "slow")] * 3, context
    assert lifecycle[-1] == ("state", "idle", "cancelled"), context
    after_cancel = lifecycle[cancel_at + 1 : -1]
    assert set(after_cancel) <= {("chunk", "slow")}, context  # updates before the idle are allowed
    assert 3 + len(after_cancel) < 200, context  # the cancel really stopped the work
    assert ("state", "idle", "end_turn") not in lifecycle, context

    # wire shape of what the generated agent sent
    inbound = [frame["msg"] for frame in record["frames"] if frame["dir"] == "in"]
    assert all(msg.get("jsonrpc") == "2.0" for msg in inbound), context
    permission = [msg for msg in inbound if msg.get("method") == "session/request_permission"]
    assert len(permission) == 1 and isinstance(permission[0]["id"], int), context
    answers = [
        frame["msg"]
        for frame in record["frames"]
        if frame["dir"] == "out"
        and frame["msg"].get("id") == permission[0]["id"]
        and "result" in frame["msg"]
    ]
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": permission[0]["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
    ], context


def test_generated_agent_withdraws_permission_request_from_sdk_client(node: str) -> None:
    """session/cancel while the SDK client holds a permission prompt open.

    The generated agent cancels its work; the runtime sends `$/cancel_request` for the pending
    session/request_permission (the SDK aborts the handler's signal with -32800), the SDK client
    answers the `cancelled` outcome, the runtime drops that late answer quietly, and the agent
    reports idle/cancelled.
    """
    record = _run_sdk_client(node, INTEROP / "cancelling_agent.py", "cancel-permission")
    context = (
        f"error: {record['error']}\n--- node stderr\n{record['stderr']}\n"
        f"--- raw frames (out = SDK client -> Python agent)\n{_frames_text(record['frames'])}"
    )
    assert record["ok"], context
    assert record["agentExit"] == {"code": 0, "signal": None}, context
    (segment,) = _segments(record["events"])
    message_id = record["prompts"][0]["messageId"]
    steps = [
        (
            e["kind"],
            e.get("sessionUpdate"),
            e.get("state"),
            e.get("stopReason"),
            e.get("how"),
            e.get("reason"),
        )
        for e in segment
        if e["kind"] != "prompt_accepted"
    ]
    assert steps == [
        ("update", "user_message", None, None, None, None),
        ("update", "state_update", "running", None, None, None),
        ("update", "state_update", "requires_action", None, None, None),
        ("permission", None, None, None, None, None),
        ("cancel_sent", None, None, None, None, None),
        ("permission_answered", None, None, None, "aborted", -32800),  # via $/cancel_request
        ("update", "state_update", "idle", "cancelled", None, None),
    ], context
    assert segment[0]["messageId"] == message_id, context

    frames = record["frames"]
    (request,) = [
        f["msg"]
        for f in frames
        if f["dir"] == "in" and f["msg"].get("method") == "session/request_permission"
    ]
    cancels = [
        f["msg"]
        for f in frames
        if f["dir"] == "in" and f["msg"].get("method") == "$/cancel_request"
    ]
    assert cancels == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request["id"]}}
    ], context
    answers = [
        f["msg"]
        for f in frames
        if f["dir"] == "out" and f["msg"].get("id") == request["id"] and "method" not in f["msg"]
    ]
    assert answers == [
        {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {"outcome": "cancelled"}}}
    ], context
    # the late answer to the withdrawn request is dropped quietly (no error frame, no warning)
    assert not [f for f in frames if f["dir"] == "in" and "error" in f["msg"]], context
    assert "unknown request id" not in record["stderr"], context
    assert "Traceback" not in record["stderr"], context


def test_sdk_client_withdraws_held_prompt_from_generated_agent(node: str) -> None:
    """A prompt held by a busy generated agent, withdrawn with the SDK's cancellationSignal.

    The SDK sends `$/cancel_request` for it; the generated runtime cancels the handler and
    answers -32800, which the SDK surfaces as a RequestError; the first prompt then completes.
    """
    record = _run_sdk_client(node, INTEROP / "cancelling_agent.py", "cancel-held-prompt")
    context = (
        f"error: {record['error']}\n--- node stderr\n{record['stderr']}\n"
        f"--- raw frames (out = SDK client -> Python agent)\n{_frames_text(record['frames'])}"
    )
    assert record["ok"], context
    assert record["agentExit"] == {"code": 0, "signal": None}, context
    (segment,) = _segments(record["events"])
    results = [e for e in segment if e["kind"] == "held_prompt_result"]
    assert results == [
        {"kind": "held_prompt_result", "code": -32800, "message": "Request cancelled"}
    ], context
    user_messages = [e for e in segment if e.get("sessionUpdate") == "user_message"]
    assert [e["text"] for e in user_messages] == ["wait for permission"], context  # never inserted
    assert _lifecycle(segment)[-2:] == [
        ("chunk", "selected"),
        ("state", "idle", "end_turn"),
    ], context

    frames = record["frames"]
    (held,) = [
        f["msg"]
        for f in frames
        if f["dir"] == "out"
        and f["msg"].get("method") == "session/prompt"
        and f["msg"]["params"]["prompt"][0]["text"] == "held prompt"
    ]
    cancels = [f["msg"] for f in frames if f["msg"].get("method") == "$/cancel_request"]
    assert cancels == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": held["id"]}}
    ], context
    answers = [f["msg"] for f in frames if f["dir"] == "in" and f["msg"].get("id") == held["id"]]
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": held["id"],
            "error": {"code": -32800, "message": "Request cancelled"},
        }
    ], context


# --------------------------------------------------------------------------- Python client -> SDK


class RecordingClient(acp.Client):
    """A generated client that records the lifecycle and can wait for a condition on it."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.permission_params: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self.on_chunk: Callable[[], None] | None = None

    def _add(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait_for(self, what: str, predicate: Callable[[list[tuple[Any, ...]]], bool]) -> None:
        async def wait() -> None:
            while not predicate(self.events):
                self._changed.clear()
                await self._changed.wait()

        try:
            await asyncio.wait_for(wait(), STEP_TIMEOUT)
        except TimeoutError:
            pytest.fail(
                f"timed out after {STEP_TIMEOUT} s waiting for {what}; events: {self.events}"
            )

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        self.permission_params.append(params.to_dict())
        self._add(("permission", params.title))
        return acp.RequestPermissionResponse.from_dict(
            {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )

    async def on_user_message(self, params: Any, update: Any) -> None:
        text = " ".join(block.to_dict().get("text", "") for block in update.content or [])
        self._add(("user_message", update.message_id, text))

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self._add(("chunk", update.message_id, update.content.text))
        if self.on_chunk is not None:
            self.on_chunk()

    async def on_state_update(self, params: Any, update: Any) -> None:
        self._add(("state", update.state, getattr(update, "stop_reason", None)))

    async def on_unknown_update(self, params: Any, update: Any) -> None:
        self._add(("unknown", update.raw))


class UndecidedClient(RecordingClient):
    """A client whose user never answers the permission prompt (the handler waits forever).

    With `answer_cancelled`, the handler itself turns its cancellation into the `cancelled`
    outcome; without it, whatever the generated runtime does on `$/cancel_request` is sent.
    """

    def __init__(self, *, answer_cancelled: bool) -> None:
        super().__init__()
        self.answer_cancelled = answer_cancelled

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        self.permission_params.append(params.to_dict())
        self._add(("permission", params.title))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self._add(("permission_handler_cancelled",))
            if not self.answer_cancelled:
                raise
        return acp.RequestPermissionResponse.from_dict({"outcome": {"outcome": "cancelled"}})


def _is_idle(event: tuple[Any, ...]) -> bool:
    return event[0] == "state" and event[1] == "idle"


async def _stop(process: asyncio.subprocess.Process) -> int | None:
    try:
        return await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None


def _read_frames(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def test_generated_client_drives_sdk_agent(node: str, tmp_path: Path) -> None:
    frames_path = tmp_path / "frames.jsonl"
    client = RecordingClient()
    agent, connection, process = await acp.connect_agent(
        [node, str(INTEROP / "v2_agent.mjs"), "--frames", str(frames_path)], client, cwd=INTEROP
    )

    def context() -> str:
        return (
            f"events: {client.events}\n--- raw frames (in = Python client -> SDK agent)\n"
            f"{_frames_text(_read_frames(frames_path))}"
        )

    try:
        async with connection:
            init = await asyncio.wait_for(
                agent.initialize(
                    acp.InitializeRequest.from_dict(
                        {"protocolVersion": 2, "info": {"name": "acp-codegen", "version": "1.0"}}
                    )
                ),
                STEP_TIMEOUT,
            )
            assert init.protocol_version == 2, context()
            assert init.to_dict()["info"] == {
                "name": "sdk-echo-agent",
                "version": "1.0.0",
            }, context()
            assert init.to_dict()["_meta"] == {"clientName": "acp-codegen"}, context()
            session = await asyncio.wait_for(
                agent.session_new(
                    acp.NewSessionRequest.from_dict({"cwd": str(ROOT), "mcpServers": []})
                ),
                STEP_TIMEOUT,
            )
            session_id = session.session_id

            # Prompt 1: the full lifecycle with a permission round trip.
            response = await asyncio.wait_for(
                agent.session_prompt(
                    acp.PromptRequest.from_dict(
                        {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT_1}]}
                    )
                ),
                STEP_TIMEOUT,
            )
            await client.wait_for("idle after the first prompt", lambda ev: any(map(_is_idle, ev)))
            first = list(client.events)
            assert isinstance(response.message_id, str) and response.message_id, context()
            assert first == [
                ("user_message", response.message_id, PROMPT_1),
                ("state", "running", None),
                ("state", "requires_action", None),
                ("permission", "Run the pretend tool?"),
                ("state", "running", None),
                ("chunk", "m_perm", "selected:allow"),  # the option this client chose
                ("chunk", "m_echo", "ask"),
                ("chunk", "m_echo", "permission"),
                ("chunk", "m_echo", "then"),
                ("chunk", "m_echo", "echo"),
                ("unknown", {"sessionUpdate": "_vendor_ping", "n": 1}),  # custom variant, kept raw
                ("state", "idle", "end_turn"),
            ], context()
            permission = client.permission_params[0]
            assert permission["sessionId"] == session_id, context()
            assert [o["optionId"] for o in permission["options"]] == ["allow", "reject"], context()

            # Prompt 2: cancelled with session/cancel after its third chunk.
            client.events.clear()
            three_chunks = asyncio.Event()
            chunks = 0

            def count_chunk() -> None:
                nonlocal chunks
                chunks += 1
                if chunks == 3:
                    three_chunks.set()

            client.on_chunk = count_chunk
            response_2 = await asyncio.wait_for(
                agent.session_prompt(
                    acp.PromptRequest.from_dict(
                        {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT_2}]}
                    )
                ),
                STEP_TIMEOUT,
            )
            await asyncio.wait_for(three_chunks.wait(), STEP_TIMEOUT)
            await agent.session_cancel(
                acp.CancelSessionNotification.from_dict({"sessionId": session_id})
            )
            await client.wait_for("idle after session/cancel", lambda ev: any(map(_is_idle, ev)))
            second = list(client.events)
            assert response_2.message_id not in (None, response.message_id), context()
            assert second[:2] == [
                ("user_message", response_2.message_id, PROMPT_2),
                ("state", "running", None),
            ], context()
            chunk_events = second[2:-1]
            assert chunk_events and set(chunk_events) == {("chunk", "m_echo", "slow")}, context()
            assert 3 <= len(chunk_events) < 200, context()  # the cancel really stopped the work
            assert second[-1] == ("state", "idle", "cancelled"), context()
    finally:
        with contextlib.suppress(ProcessLookupError):
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
        exit_code = await _stop(process)
    assert exit_code == 0, f"the SDK agent exited {exit_code} after EOF\n{context()}"

    # wire shape of what the generated client sent
    outbound = [frame["msg"] for frame in _read_frames(frames_path) if frame["dir"] == "in"]
    assert all(msg.get("jsonrpc") == "2.0" for msg in outbound), context()
    methods = [msg.get("method") for msg in outbound if "method" in msg]
    assert methods == [
        "initialize",
        "session/new",
        "session/prompt",
        "session/prompt",
        "session/cancel",
    ], context()
    assert "id" not in outbound[-1], context()  # session/cancel is a notification


@pytest.mark.parametrize(
    "answer_cancelled",
    [
        pytest.param(False, id="runtime-default"),
        pytest.param(True, id="handler-answers-cancelled"),
    ],
)
async def test_sdk_agent_cancels_pending_permission_of_generated_client(
    node: str, tmp_path: Path, answer_cancelled: bool
) -> None:
    """session/cancel while a permission prompt is open: the SDK agent sends $/cancel_request.

    The schema: "The client answers a request the agent cancels with `$/cancel_request` with
    this outcome [cancelled]"; the SDK agent keeps waiting for that answer and echoes it as the
    `m_perm` chunk ("cancelled", or "error:CODE" when the request failed instead).
    """
    frames_path = tmp_path / "frames.jsonl"
    client = UndecidedClient(answer_cancelled=answer_cancelled)
    agent, connection, process = await acp.connect_agent(
        [node, str(INTEROP / "v2_agent.mjs"), "--frames", str(frames_path)], client, cwd=INTEROP
    )

    def context() -> str:
        return (
            f"events: {client.events}\n--- raw frames (in = Python client -> SDK agent)\n"
            f"{_frames_text(_read_frames(frames_path))}"
        )

    try:
        async with connection:
            await asyncio.wait_for(
                agent.initialize(
                    acp.InitializeRequest.from_dict(
                        {"protocolVersion": 2, "info": {"name": "acp-codegen", "version": "1.0"}}
                    )
                ),
                STEP_TIMEOUT,
            )
            session = await asyncio.wait_for(
                agent.session_new(
                    acp.NewSessionRequest.from_dict({"cwd": str(ROOT), "mcpServers": []})
                ),
                STEP_TIMEOUT,
            )
            session_id = session.session_id
            response = await asyncio.wait_for(
                agent.session_prompt(
                    acp.PromptRequest.from_dict(
                        {
                            "sessionId": session_id,
                            "prompt": [{"type": "text", "text": "wait for permission"}],
                        }
                    )
                ),
                STEP_TIMEOUT,
            )
            await client.wait_for(
                "the permission request", lambda ev: ("permission", "Run the pretend tool?") in ev
            )
            await agent.session_cancel(
                acp.CancelSessionNotification.from_dict({"sessionId": session_id})
            )
            await client.wait_for("idle after session/cancel", lambda ev: any(map(_is_idle, ev)))
            frames = _read_frames(frames_path)
            permission_ids = [
                f["msg"]["id"]
                for f in frames
                if f["dir"] == "out" and f["msg"].get("method") == "session/request_permission"
            ]
            cancels = [
                f["msg"]
                for f in frames
                if f["dir"] == "out" and f["msg"].get("method") == "$/cancel_request"
            ]
            answers = [
                f["msg"]
                for f in frames
                if f["dir"] == "in"
                and "method" not in f["msg"]
                and f["msg"].get("id") in permission_ids
            ]
            assert cancels == [
                {
                    "jsonrpc": "2.0",
                    "method": "$/cancel_request",
                    "params": {"requestId": permission_ids[0]},
                }
            ], context()
            assert len(answers) == 1, context()  # exactly one answer to the cancelled request
            assert client.events == [
                ("user_message", response.message_id, "wait for permission"),
                ("state", "running", None),
                ("state", "requires_action", None),
                ("permission", "Run the pretend tool?"),
                ("permission_handler_cancelled",),
                ("chunk", "m_perm", "cancelled"),
                ("state", "idle", "cancelled"),
            ], context()
            assert answers[0] == {
                "jsonrpc": "2.0",
                "id": permission_ids[0],
                "result": {"outcome": {"outcome": "cancelled"}},
            }, context()
    finally:
        with contextlib.suppress(ProcessLookupError):
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
        exit_code = await _stop(process)
    assert exit_code == 0, f"the SDK agent exited {exit_code} after EOF\n{context()}"
