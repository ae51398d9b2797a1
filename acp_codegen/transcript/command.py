"""The `acp-codegen check-transcript` command: options in, report printed, exit status out.

Exit status: 0 for a clean transcript, 1 when anything is found, 2 when the file cannot be read
as a transcript (one line per diagnostic on stderr, as for the other commands).
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from acp_codegen.errors import CodegenError
from acp_codegen.progress import terminal_progress


class Format(enum.StrEnum):
    """Output formats."""

    text = "text"
    json = "json"


def check_transcript(
    file: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE",
            help='Transcript: JSON lines of {"from": "client"|"agent", "message": ...}.',
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    rules: Annotated[
        bool, typer.Option("--rules", help="List the rules with their source and exit.")
    ] = False,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            metavar="SRC",
            help=(
                "Schema revision: path, URL, npm:..., github:... or a pinned target (default: the "
                "default pin, or the pin of the version initialize negotiates)."
            ),
        ),
    ] = None,
) -> None:
    """Report every rule of the schema and the spec a recorded transcript breaks (see docs/conformance.md)."""  # noqa: E501 - typer prints it as the help, line breaks included
    # imported here: the checker (jsonschema) costs every other command's start a tenth of a second
    from acp_codegen.transcript.report import render_rules, run

    if rules:
        sys.stdout.write(render_rules(fmt.value))
        return
    if file is None:
        print("error[usage] <input>: missing FILE (the transcript to check)", file=sys.stderr)
        raise typer.Exit(2)
    try:
        with terminal_progress(Console(stderr=True), enabled=True):
            output, status = run(file, fmt.value, schema)
    except CodegenError as error:
        for diagnostic in error.diagnostics:
            print(diagnostic.render(), file=sys.stderr)
        raise typer.Exit(2) from None
    sys.stdout.write(output)
    raise typer.Exit(status)
