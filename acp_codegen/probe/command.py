"""The `acp-codegen probe agent|client` commands: options in, report printed, exit status out.

Exit status: 0 when every exercised rule passed and everything the peer advertised was exercised,
1 when a rule failed or something expected went unexercised, 2 when the probe could not run (a bad
command line, a schema that does not load).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from acp_codegen.cli_help import epilog
from acp_codegen.errors import CodegenError, fail
from acp_codegen.progress import step, terminal_progress
from acp_codegen.transcript.command import Format

# The probe itself (its rule checker, jsonschema, the runtime) is imported when a probe runs,
# not at every start of the CLI.
if TYPE_CHECKING:
    from acp_codegen.probe.report import ProbeOutcome

probe_app = typer.Typer(
    no_args_is_help=True,
    help="Run an agent or a client against a scripted peer and check every rule.",
)

CommandArg = Annotated[
    list[str],
    typer.Argument(
        metavar="-- CMD...", help="The command to probe (after --).", show_default=False
    ),
]
FormatOption = Annotated[Format, typer.Option("--format", help="Output format.")]
SchemaOption = Annotated[
    str | None,
    typer.Option(
        "--schema",
        metavar="SRC",
        help="Schema revision (default: the default pin, or the pin of the negotiated version).",
    ),
]
TranscriptOption = Annotated[
    Path | None,
    typer.Option(
        "--transcript",
        metavar="FILE",
        help="Also write the recorded wire to FILE (check-transcript reads it).",
    ),
]
ResponseTimeout = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait for one response.")
]
TurnTimeout = Annotated[
    float,
    typer.Option(
        "--turn-timeout", help="Seconds one prompt turn (or the client's start) may take."
    ),
]
CapabilitiesOption = Annotated[
    str | None,
    typer.Option(
        "--capabilities",
        metavar="JSON",
        help=(
            "The client capabilities the probe advertises in initialize (a JSON object; default: "
            "terminal auth and form elicitation)."
        ),
    ),
]
ExitTimeout = Annotated[
    float, typer.Option("--exit-timeout", help="Seconds the peer gets to exit at the end.")
]
CancelTimeout = Annotated[
    float,
    typer.Option(
        "--cancel-timeout",
        help="Seconds a request withdrawn with $/cancel_request may take to be answered.",
    ),
]
AgentVersionOption = Annotated[
    int | None,
    typer.Option(
        "--protocol-version",
        min=1,
        max=2,
        help="The protocol version to ask for first (default: the schema's).",
    ),
]
ClientVersionOption = Annotated[
    int | None,
    typer.Option(
        "--protocol-version",
        min=1,
        max=2,
        help=(
            "The one protocol version the probe's agent speaks (default: the client's, when "
            "pinned)."
        ),
    ),
]


def _capabilities(text: str | None) -> dict[str, Any] | None:
    """The `--capabilities` JSON object, or a one-line error."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise fail(
            "bad-option", f"--capabilities is not JSON: {error}", file="command line"
        ) from None
    if not isinstance(value, dict):
        raise fail("bad-option", "--capabilities must be a JSON object", file="command line")
    return value


def _finish(run: Callable[[], ProbeOutcome], fmt: Format) -> None:
    from acp_codegen.probe.report import render_json, render_text

    try:
        with (
            terminal_progress(Console(stderr=True), enabled=True),
            step("probing (the report follows)"),
        ):
            outcome = run()
    except CodegenError as error:
        for diagnostic in error.diagnostics:
            print(diagnostic.render(), file=sys.stderr)
        raise typer.Exit(2) from None
    sys.stdout.write(render_json(outcome) if fmt is Format.json else render_text(outcome))
    raise typer.Exit(outcome.exit_status)


@probe_app.command("agent", epilog=epilog("probe agent"))
def agent(
    command: CommandArg,
    fmt: FormatOption = Format.text,
    schema: SchemaOption = None,
    transcript: TranscriptOption = None,
    timeout: ResponseTimeout = 10.0,
    turn_timeout: TurnTimeout = 30.0,
    exit_timeout: ExitTimeout = 5.0,
    capabilities: CapabilitiesOption = None,
    cancel_timeout: CancelTimeout = 5.0,
    protocol_version: AgentVersionOption = None,
) -> None:
    """Launch CMD as an agent and drive it as a demanding client would."""
    from acp_codegen.probe.run import Timeouts, probe_agent

    timeouts = Timeouts(timeout, turn_timeout, exit_timeout, cancel_timeout)
    _finish(
        lambda: probe_agent(
            command, schema, timeouts, transcript, _capabilities(capabilities), protocol_version
        ),
        fmt,
    )


@probe_app.command("client", epilog=epilog("probe client"))
def client(
    command: CommandArg,
    fmt: FormatOption = Format.text,
    schema: SchemaOption = None,
    transcript: TranscriptOption = None,
    timeout: ResponseTimeout = 10.0,
    turn_timeout: TurnTimeout = 30.0,
    exit_timeout: ExitTimeout = 10.0,
    protocol_version: ClientVersionOption = None,
) -> None:
    """Launch the client CMD, with `{agent}` (its arguments) or `{agent_line}` (one shell-quoted
    command line) replaced by the probe's own agent command, and test it."""
    from acp_codegen.probe.run import Timeouts, probe_client

    timeouts = Timeouts(timeout, turn_timeout, exit_timeout)
    _finish(lambda: probe_client(command, schema, timeouts, transcript, protocol_version), fmt)


@probe_app.command("proxy", epilog=epilog("probe proxy"))
def proxy(
    command: CommandArg,
    fmt: FormatOption = Format.text,
    schema: SchemaOption = None,
    transcript: TranscriptOption = None,
    timeout: ResponseTimeout = 10.0,
    turn_timeout: TurnTimeout = 30.0,
    exit_timeout: ExitTimeout = 5.0,
) -> None:
    """Launch CMD as a proxy and be its conductor, client and successor: proxy/initialize,
    forwarding both ways with _meta and unknown fields kept, and plain initialize on a second
    connection."""
    from acp_codegen.probe.proxy import probe_proxy
    from acp_codegen.probe.run import Timeouts

    timeouts = Timeouts(timeout, turn_timeout, exit_timeout)
    _finish(lambda: probe_proxy(command, schema, timeouts, transcript), fmt)
