"""A real transcript: the echo agent of tests/dispatch driven over a pipe by a recording client.

The client's reader and writer are wrapped so every JSON-RPC line is recorded as the client saw
it (`{"from": ..., "message": ...}`), the recording is written as a transcript file, and the
checker must find nothing in it. The client also renders the session with `SessionState`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from cli_support import GENERATED, run_cli

from acp_codegen.transcript.check import check
from acp_codegen.transcript.read import read_transcript

sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp

ECHO_AGENT = Path(__file__).resolve().parents[1] / "dispatch" / "echo_agent.py"


class Recorder:
    """Collects transcript lines from both directions, in the order the client sees them."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def record(self, sender: str, frame: bytes) -> None:
        for line in frame.splitlines():
            if line.strip():
                self.lines.append({"from": sender, "message": json.loads(line)})

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


class RecordingReader:
    """The agent's stdout, recorded line by line."""

    def __init__(self, inner: asyncio.StreamReader, recorder: Recorder) -> None:
        self.inner, self.recorder, self.buffer = inner, recorder, b""

    async def read(self, n: int = -1) -> bytes:
        data = await self.inner.read(n)
        self.buffer += data
        complete, _, self.buffer = self.buffer.rpartition(b"\n")
        if complete:
            self.recorder.record("agent", complete)
        return data


class RecordingWriter:
    """The agent's stdin, recorded frame by frame."""

    def __init__(self, inner: asyncio.StreamWriter, recorder: Recorder) -> None:
        self.inner, self.recorder = inner, recorder

    def write(self, data: bytes) -> None:
        self.recorder.record("client", data)
        self.inner.write(data)

    async def drain(self) -> None:
        await self.inner.drain()

    def close(self) -> None:
        self.inner.close()


class RenderingClient(acp.Client):
    """Renders every session with the generated reducer; approves permissions."""

    def __init__(self) -> None:
        self.sessions: dict[str, acp.SessionState] = {}
        self.idle = asyncio.Event()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        state = self.sessions.setdefault(params.session_id, acp.SessionState(params.session_id))
        state.apply(params.update)
        if (
            params.update.session_update == "state_update"
            and state.state == "idle"
            and state.stop_reason
        ):
            self.idle.set()

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        return acp.RequestPermissionResponse.from_dict(
            {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )


async def _record(recorder: Recorder, client: RenderingClient) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), str(ECHO_AGENT.parent)])}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ECHO_AGENT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    connection = acp.Connection(
        client,
        acp.CLIENT_METHODS,
        RecordingReader(process.stdout, recorder),
        RecordingWriter(process.stdin, recorder),
    )
    agent = client.peer = acp.AgentPeer(connection)
    async with connection:
        await agent.initialize(
            acp.InitializeRequest.from_dict(
                {"protocolVersion": 2, "info": {"name": "rec", "version": "1"}}
            )
        )
        session = await agent.session_new(
            acp.NewSessionRequest.from_dict({"cwd": "/tmp", "mcpServers": []})
        )
        for words in ("ask permission then echo", "and once more"):
            client.idle.clear()
            await agent.session_prompt(
                acp.PromptRequest.from_dict(
                    {"sessionId": session.session_id, "prompt": [{"type": "text", "text": words}]}
                )
            )
            await asyncio.wait_for(client.idle.wait(), 10)
    await process.wait()
    return session.session_id


async def test_a_recorded_echo_agent_transcript_has_no_findings(tmp_path: Path) -> None:
    recorder, client = Recorder(), RenderingClient()
    session_id = await _record(recorder, client)
    path = recorder.write(tmp_path / "echo.jsonl")
    methods = [line["message"].get("method") for line in recorder.lines]
    assert methods.count("session/prompt") == 2 and "session/request_permission" in methods
    assert check(read_transcript(path)) == []
    result = run_cli("check-transcript", path)
    assert result.returncode == 0, result.describe()

    state = client.sessions[session_id]
    users = [
        e for e in state.timeline if isinstance(e, acp.TimelineMessage) and e.role == "user_message"
    ]
    assert [[b.to_dict()["text"] for b in u.content] for u in users] == [
        ["ask permission then echo"],
        ["and once more"],
    ]
    assert (state.state, state.stop_reason) == ("idle", "end_turn")
    assert any(
        isinstance(e, acp.TimelineRaw) and e.raw == {"sessionUpdate": "_vendor_ping", "n": 1}
        for e in state.timeline
    )


async def test_a_tampered_echo_transcript_is_caught(tmp_path: Path) -> None:
    recorder, client = Recorder(), RenderingClient()
    await _record(recorder, client)
    # drop every `running` state update: the agent's output now comes without one
    kept = [
        line
        for line in recorder.lines
        if (line["message"].get("params") or {}).get("update", {}).get("state") != "running"
    ]
    recorder.lines = kept
    findings = check(read_transcript(recorder.write(tmp_path / "tampered.jsonl")))
    assert {f.rule for f in findings} == {"work-without-running"} and len(findings) == 2
