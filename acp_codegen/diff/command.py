"""The `acp-codegen diff` command: options in, results printed, exit status out. No logic here
(`acp_codegen.api.compare` and `compare_history` do it).

Exit status: 0 when nothing reaches the `--fail-on` level, 1 when something does, 2 when a
revision cannot be loaded (one line per diagnostic on stderr, as for `generate`).
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from acp_codegen.diff.model import fails
from acp_codegen.diff.render import (
    render_github,
    render_json,
    render_markdown,
    render_rules,
    render_text,
)
from acp_codegen.errors import CodegenError, fail
from acp_codegen.progress import terminal_progress


class Format(enum.StrEnum):
    """Output formats."""

    text = "text"
    markdown = "markdown"
    json = "json"
    github = "github"


class FailOn(enum.StrEnum):
    """Which level makes the command exit 1."""

    breaking = "breaking"
    warning = "warning"
    any = "any"
    none = "none"


def diff(
    revisions: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="OLD NEW",
            help=(
                "Revisions, oldest first: npm:..., github:..., URLs, paths or pinned target names "
                "(pin:NAME when a file has the same name)."
            ),
            show_default=False,
        ),
    ] = None,
    series: Annotated[
        bool,
        typer.Option(
            "--series", help="Compare each consecutive pair of the revisions given (A B C ...)."
        ),
    ] = False,
    history: Annotated[
        str | None,
        typer.Option(
            "--history",
            metavar="TARGET",
            help=(
                "Compare each consecutive pair of a pinned target's history, ending at its "
                "current source."
            ),
        ),
    ] = None,
    fmt: Annotated[
        Format | None,
        typer.Option(
            "--format", help="Output format (default: text on a terminal, markdown otherwise)."
        ),
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 if a change reaches this level.")
    ] = FailOn.breaking,
    no_docs: Annotated[
        bool, typer.Option("--no-docs", help="Hide description-only changes.")
    ] = False,
    rules: Annotated[bool, typer.Option("--rules", help="List the rules and exit.")] = False,
    pins: Annotated[
        Path | None,
        typer.Option(
            "--pins",
            help=(
                "Pin file for target names and --history (default: schema/pins.toml of the "
                "current directory or the nearest one above it, else the toolkit's own)."
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """Show what changed between schema revisions, and whom it breaks (agent, client)."""
    out = Console(highlight=False, soft_wrap=True)
    chosen = fmt.value if fmt is not None else ("text" if sys.stdout.isatty() else "markdown")
    if rules:
        table = render_rules(chosen, out)
        if table is not None:
            sys.stdout.write(table)
        return
    from acp_codegen.api import compare, compare_history

    args = revisions or []
    try:
        with terminal_progress(Console(stderr=True), enabled=True):
            if history is not None:
                if args:
                    raise fail("diff-usage", "--history takes no OLD/NEW arguments")
                results = compare_history(history, pins=pins)
            elif len(args) < 2 or (len(args) > 2 and not series):
                raise fail(
                    "diff-usage",
                    f"expected OLD and NEW, got {len(args)} argument(s) (use --series for more)",
                )
            else:
                results = compare(*args, pins=pins)
    except CodegenError as error:
        for diagnostic in error.diagnostics:
            print(diagnostic.render(), file=sys.stderr)
        raise typer.Exit(2) from None
    if no_docs:
        results = [r.without_docs() for r in results]
    if chosen == "text":
        render_text(results, out)
    else:
        sys.stdout.write(
            {"markdown": render_markdown, "json": render_json, "github": render_github}[chosen](
                results
            )
        )
    if fails(results, fail_on.value):
        raise typer.Exit(1)
