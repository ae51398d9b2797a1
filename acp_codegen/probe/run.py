"""Running a probe end to end: start the peer, run the script over a recorded link, stop the peer,
finish the check. `probe_agent` launches the agent command itself; `probe_client` listens on a
Unix socket and launches the client with `{agent}` replaced by the relay command that connects
the client's agent pipes to that socket (`acp_codegen.probe.relay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_codegen.errors import fail
from acp_codegen.probe.agent import AgentScript
from acp_codegen.probe.client import ClientScript
from acp_codegen.probe.link import MAX_LINE, Link, open_transcript
from acp_codegen.probe.report import ProbeOutcome
from acp_codegen.transcript.conformance import Conformance
from acp_codegen.transcript.schema import resolve_revision

AGENT_PLACEHOLDER = "{agent}"


@dataclass(frozen=True)
class Timeouts:
    """How long the probe waits: for one response, for one prompt turn, for the peer to exit."""

    response: float = 10.0
    turn: float = 30.0
    exit: float = 5.0


async def _spawn(command: Sequence[str], **pipes: int) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(*command, limit=MAX_LINE, **pipes)  # type: ignore[arg-type]
    except OSError as error:
        raise fail("probe-launch", f"cannot start {command[0]!r}: {error.strerror or error}", file="command line") from None


async def _stop(process: asyncio.subprocess.Process, timeout: float, notes: list[str]) -> None:
    try:
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        notes.append(f"the peer did not exit within {timeout:g}s of its input closing; it was killed")
        process.kill()
        await process.wait()


async def _probe_agent(command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None,
                       capabilities: dict[str, Any] | None) -> ProbeOutcome:
    revision = resolve_revision(schema)
    conformance = Conformance(revision, fixed=schema is not None)
    notes: list[str] = []
    process = await _spawn(command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    with contextlib.ExitStack() as stack:
        handle = open_transcript(transcript)
        if handle is not None:
            stack.enter_context(handle)
        link = Link("client", process.stdout, process.stdin, conformance, handle, timeouts.response)
        link.start()
        script = AgentScript(link, revision.version, timeouts.turn, capabilities)
        await script.run()
        notes.extend(script.log)
        with contextlib.suppress(OSError):
            process.stdin.close()
        await _stop(process, timeouts.exit, notes)
        await link.stop()
    return ProbeOutcome("agent", tuple(command), conformance.finish(), tuple(notes), str(transcript) if transcript else None)


def relay_command(socket_path: str) -> list[str]:
    """The command a client runs as its agent: pipes its stdio to the probe's socket."""
    return [sys.executable, "-m", "acp_codegen.probe.relay", socket_path]


async def _probe_client(command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None) -> ProbeOutcome:
    if AGENT_PLACEHOLDER not in command:
        raise fail("bad-option", f"the client command must contain {AGENT_PLACEHOLDER} where the agent command goes", file="command line")
    revision = resolve_revision(schema)
    conformance = Conformance(revision, fixed=schema is not None)
    notes: list[str] = []
    connected: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await connected.put((reader, writer))

    with tempfile.TemporaryDirectory(prefix="acp-probe-") as tmp, contextlib.ExitStack() as stack:
        socket_path = str(Path(tmp) / "agent.sock")
        server = await asyncio.start_unix_server(accept, socket_path, limit=MAX_LINE)
        argv: list[str] = []
        for arg in command:
            argv.extend(relay_command(socket_path) if arg == AGENT_PLACEHOLDER else [arg])
        # the client's own output goes to stderr: stdout carries the report (JSON must stay clean)
        process = await _spawn(argv, stdin=asyncio.subprocess.DEVNULL, stdout=sys.stderr.fileno())
        try:
            reader, writer = await asyncio.wait_for(connected.get(), timeouts.turn)
        except TimeoutError:
            notes.append(f"the client never started its agent within {timeouts.turn:g}s")
            process.kill()
            await process.wait()
            server.close()
            return ProbeOutcome("client", tuple(command), conformance.finish(), tuple(notes), None)
        handle = open_transcript(transcript)
        if handle is not None:
            stack.enter_context(handle)
        link = Link("agent", reader, writer, conformance, handle, timeouts.response)
        link.start()
        script = ClientScript(link, revision, timeouts.turn)
        await script.run()
        notes.extend(script.log)
        writer.close()  # the relay exits when the socket closes, and the client sees its agent end
        await _stop(process, timeouts.exit, notes)
        await link.stop()
        server.close()
    return ProbeOutcome("client", tuple(command), conformance.finish(), tuple(notes), str(transcript) if transcript else None)


def probe_agent(command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None,
                capabilities: dict[str, Any] | None = None) -> ProbeOutcome:
    """Probe an agent command (advertising `capabilities` in `initialize` when given)."""
    return asyncio.run(_probe_agent(command, schema, timeouts, transcript, capabilities))


def probe_client(command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None) -> ProbeOutcome:
    """Probe a client command containing `{agent}`."""
    return asyncio.run(_probe_client(command, schema, timeouts, transcript))
