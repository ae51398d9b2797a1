"""Running a probe end to end: start the peer, run the script over a recorded link, stop the peer,
finish the check. `probe_agent` launches the agent command itself (and once more, briefly, to ask
for a protocol version no schema defines); `probe_client` listens on a Unix socket and launches
the client with the relay command that connects the client's agent pipes to that socket
(`acp_codegen.probe.relay`) in place of its agent placeholder: `{agent}`, a whole argument,
becomes the relay's arguments; `{agent_line}`, anywhere in an argument, becomes the relay as one
shell-quoted command line (for clients that take the agent as one string, or parse options after
it).

A peer that exits early, never connects or closes its pipes ends the script with a note, never a
traceback; what was recorded is still checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_codegen.errors import fail
from acp_codegen.probe.agent import AgentScript, version_check
from acp_codegen.probe.client import ClientScript
from acp_codegen.probe.link import MAX_LINE, Link, open_transcript
from acp_codegen.probe.report import ProbeOutcome
from acp_codegen.transcript.conformance import Conformance
from acp_codegen.transcript.schema import Revision, pinned_for_version, resolve_revision

AGENT_PLACEHOLDER = "{agent}"
AGENT_LINE_PLACEHOLDER = "{agent_line}"


@dataclass(frozen=True)
class Timeouts:
    """How long the probe waits: for one response, for one prompt turn, for the peer to exit."""

    response: float = 10.0
    turn: float = 30.0
    exit: float = 5.0
    cancel: float = 5.0  # for the answer to a request withdrawn with `$/cancel_request`


def _revision(schema: str | None, protocol_version: int | None) -> tuple[Revision, bool]:
    """The revision to check against and whether it is fixed (`--schema`), for the version asked."""
    if schema is not None or protocol_version is None:
        return resolve_revision(schema), schema is not None
    default = resolve_revision(None)
    if default.version == protocol_version:
        return default, False
    found = pinned_for_version(protocol_version)
    if found is None:
        raise fail(
            "bad-option",
            f"--protocol-version {protocol_version}: no pinned schema describes it",
            file="command line",
        )
    return found, False


async def spawn_peer(command: Sequence[str], **pipes: int) -> asyncio.subprocess.Process:
    """Start the peer under probe with `pipes` (a command that cannot start is `probe-launch`)."""
    try:
        return await asyncio.create_subprocess_exec(*command, limit=MAX_LINE, **pipes)  # type: ignore[arg-type]
    except OSError as error:
        raise fail(
            "probe-launch",
            f"cannot start {command[0]!r}: {error.strerror or error}",
            file="command line",
        ) from None


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited meanwhile
        process.kill()


async def stop_peer(process: asyncio.subprocess.Process, timeout: float, notes: list[str]) -> None:
    """Give the peer `timeout` seconds to exit, then kill it (saying so in `notes`)."""
    try:
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        notes.append(
            f"the peer did not exit within {timeout:g}s of its input closing; it was killed"
        )
        _kill(process)
        await process.wait()


@contextlib.asynccontextmanager
async def driven_link(
    command: Sequence[str],
    conformance: Conformance,
    transcript: Path | None,
    timeouts: Timeouts,
    notes: list[str],
) -> AsyncIterator[Link]:
    """Start `command` and yield a started `Link` over its stdio, the probe on the client's side
    (recorded to `transcript` when given). Afterwards the peer's input is closed, it gets
    `timeouts.exit` to exit (a kill is noted in `notes`) and the link stops."""
    process = await spawn_peer(
        command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    with contextlib.ExitStack() as stack:
        handle = open_transcript(transcript)
        if handle is not None:
            stack.enter_context(handle)
        link = Link("client", process.stdout, process.stdin, conformance, handle, timeouts.response)
        link.start()
        yield link
        with contextlib.suppress(OSError):
            process.stdin.close()
        await stop_peer(process, timeouts.exit, notes)
        await link.stop()


async def _probe_agent(
    command: Sequence[str],
    schema: str | None,
    timeouts: Timeouts,
    transcript: Path | None,
    capabilities: dict[str, Any] | None,
    protocol_version: int | None,
) -> ProbeOutcome:
    revision, fixed = _revision(schema, protocol_version)
    conformance = Conformance(revision, fixed=fixed)
    notes: list[str] = []
    async with driven_link(command, conformance, transcript, timeouts, notes) as link:
        script = AgentScript(link, protocol_version or revision.version, timeouts, capabilities)
        await script.run()
        notes.extend(script.log)
    if script.initialized:  # a second, short connection: a version no schema defines
        second = await spawn_peer(
            command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        judged = await version_check(second, timeouts.response, script.version)
        if judged.finding is not None:
            conformance.external("version-echoed", "agent", 0, judged.finding)
        elif judged.note is not None:
            notes.append(judged.note)
        await stop_peer(second, timeouts.exit, notes)
    result = conformance.finish()
    return ProbeOutcome(
        "agent",
        tuple(command),
        result,
        tuple(notes),
        str(transcript) if transcript else None,
        script.misses(result),
    )


def relay_command(socket_path: str) -> list[str]:
    """The command a client runs as its agent: pipes its stdio to the probe's socket."""
    return [sys.executable, "-m", "acp_codegen.probe.relay", socket_path]


def client_argv(command: Sequence[str], relay: Sequence[str]) -> list[str]:
    """The client's command with its agent placeholder replaced by `relay` (see the module doc)."""
    if not any(arg == AGENT_PLACEHOLDER or AGENT_LINE_PLACEHOLDER in arg for arg in command):
        raise fail(
            "bad-option",
            f"the client command must contain {AGENT_PLACEHOLDER} (the agent's arguments) or "
            f"{AGENT_LINE_PLACEHOLDER} (the agent as one shell-quoted command line) where the "
            "agent goes",
            file="command line",
        )
    argv: list[str] = []
    for arg in command:
        if arg == AGENT_PLACEHOLDER:
            argv.extend(relay)
        else:
            argv.append(arg.replace(AGENT_LINE_PLACEHOLDER, shlex.join(relay)))
    return argv


async def _probe_client(
    command: Sequence[str],
    schema: str | None,
    timeouts: Timeouts,
    transcript: Path | None,
    protocol_version: int | None,
) -> ProbeOutcome:
    client_argv(command, [])  # the placeholder check, before anything starts
    revision, fixed = _revision(schema, protocol_version)
    conformance = Conformance(revision, fixed=fixed)
    notes: list[str] = []
    connected: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await connected.put((reader, writer))

    with tempfile.TemporaryDirectory(prefix="acp-probe-") as tmp, contextlib.ExitStack() as stack:
        socket_path = str(Path(tmp) / "agent.sock")
        server = await asyncio.start_unix_server(accept, socket_path, limit=MAX_LINE)
        argv = client_argv(command, relay_command(socket_path))
        # the client's own output goes to stderr: stdout carries the report (JSON must stay clean)
        process = await spawn_peer(
            argv, stdin=asyncio.subprocess.DEVNULL, stdout=sys.stderr.fileno()
        )
        waiting = asyncio.ensure_future(connected.get())
        exited = asyncio.ensure_future(process.wait())
        await asyncio.wait(
            {waiting, exited}, timeout=timeouts.turn, return_when=asyncio.FIRST_COMPLETED
        )
        exited.cancel()
        if not waiting.done():
            waiting.cancel()
            if process.returncode is not None:
                notes.append(
                    f"the client exited (status {process.returncode}) without starting its agent"
                )
            else:
                notes.append(f"the client never started its agent within {timeouts.turn:g}s")
                _kill(process)
            await process.wait()
            server.close()
            script = ClientScript(None, revision, timeouts.turn, protocol_version)
            result = conformance.finish()
            return ProbeOutcome(
                "client", tuple(command), result, tuple(notes), None, script.misses(result)
            )
        reader, writer = waiting.result()
        handle = open_transcript(transcript)
        if handle is not None:
            stack.enter_context(handle)
        link = Link("agent", reader, writer, conformance, handle, timeouts.response)
        link.start()
        script = ClientScript(link, revision, timeouts.turn, protocol_version)
        await script.run()
        notes.extend(script.log)
        with contextlib.suppress(OSError):
            # the relay exits when the socket closes, and the client sees its agent end
            writer.close()
        await stop_peer(process, timeouts.exit, notes)
        await link.stop()
        server.close()
    result = conformance.finish()
    return ProbeOutcome(
        "client",
        tuple(command),
        result,
        tuple(notes),
        str(transcript) if transcript else None,
        script.misses(result),
    )


def probe_agent(
    command: Sequence[str],
    schema: str | None,
    timeouts: Timeouts,
    transcript: Path | None,
    capabilities: dict[str, Any] | None = None,
    protocol_version: int | None = None,
) -> ProbeOutcome:
    """Probe an agent command (advertising `capabilities` in `initialize` when given; asking for
    `protocol_version` first when given, else the revision's version)."""
    return asyncio.run(
        _probe_agent(command, schema, timeouts, transcript, capabilities, protocol_version)
    )


def probe_client(
    command: Sequence[str],
    schema: str | None,
    timeouts: Timeouts,
    transcript: Path | None,
    protocol_version: int | None = None,
) -> ProbeOutcome:
    """Probe a client command containing `{agent}` or `{agent_line}` (the probe's agent speaks only
    `protocol_version` when given)."""
    return asyncio.run(_probe_client(command, schema, timeouts, transcript, protocol_version))
