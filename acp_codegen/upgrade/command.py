"""The `outdated`, `upgrade`, `migrate` and `ci` commands: options in, results printed, exit
status out.

No logic here: each calls the library API (`acp_codegen.api`) or its sibling modules. Every failure
is a `CodegenError` printed once, one line per diagnostic on stderr, exit status 2; long steps
show progress on a terminal's stderr.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from acp_codegen.atomic import write_atomic
from acp_codegen.cli_help import TargetsArgument, complete_targets, epilog
from acp_codegen.errors import CodegenError
from acp_codegen.progress import terminal_progress

PinsOption = Annotated[
    Path | None,
    typer.Option(
        "--pins",
        help=(
            "Pin file listing the tracked targets (default: schema/pins.toml of the current "
            "directory or the nearest one above it, else the toolkit's own)."
        ),
        show_default=False,
    ),
]


class OutdatedFormat(enum.StrEnum):
    """Output formats of `outdated`."""

    table = "table"
    json = "json"


def _fail(error: CodegenError) -> NoReturn:
    for diagnostic in error.diagnostics:
        print(diagnostic.render(), file=sys.stderr)
    raise typer.Exit(2)


@contextmanager
def _running() -> Iterator[None]:
    """Progress on a terminal's stderr; a `CodegenError` is printed and exits 2."""
    from rich.console import Console

    try:
        with terminal_progress(Console(stderr=True), enabled=True):
            yield
    except CodegenError as error:
        _fail(error)


def outdated(
    targets: TargetsArgument = None,
    fmt: Annotated[
        OutdatedFormat, typer.Option("--format", help="table, or json for scripts.")
    ] = OutdatedFormat.table,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema", metavar="SOURCE", help="Check one ad-hoc npm:... source instead of pins."
        ),
    ] = None,
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="sha256 of --schema's current file.")
    ] = None,
    pre: Annotated[
        bool, typer.Option("--pre", help="Count pre-releases as newer releases.")
    ] = False,
    pins: PinsOption = None,
) -> None:
    """Which pinned npm sources have newer releases, and whether their file changed (exit 1 if so)."""  # noqa: E501 - typer prints it as the help, line breaks included
    from acp_codegen.api import find_outdated
    from acp_codegen.pins import Pin
    from acp_codegen.upgrade.outdated import any_outdated, check_targets, render_json, render_table

    with _running():
        if schema is not None:
            rows = check_targets(
                [Pin("schema", "schema", schema, (sha256 or "").lower())], prereleases=pre
            )
        else:
            rows = find_outdated(targets or (), pins=pins, prereleases=pre)
    sys.stdout.write(render_json(rows) if fmt is OutdatedFormat.json else render_table(rows))
    if any_outdated(rows):
        raise typer.Exit(1)


def upgrade(
    target: Annotated[
        str,
        typer.Argument(
            metavar="TARGET",
            help="The pinned target to upgrade.",
            autocompletion=complete_targets,
            show_default=False,
        ),
    ],
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="VERSION|SOURCE",
            help=(
                "A version of the pinned npm package, or any source (default: the newest release)."
            ),
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the planned pin edit and the report; write nothing."),
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Write the markdown report here (default: stdout)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "Output directory of the generated packages (default: the pin file's `out`, else "
                "generated/ beside the project's schema/)."
            ),
            show_default=False,
        ),
    ] = None,
    code: Annotated[
        list[Path] | None,
        typer.Option(
            "--code",
            metavar="PATH",
            help=(
                "Your code, whose uses of what changed the report lists as file:line (repeatable; "
                "default: the whole project of the pin file)."
            ),
            show_default=False,
        ),
    ] = None,
    no_code: Annotated[bool, typer.Option("--no-code", help="Do not look at any code.")] = False,
    pins: PinsOption = None,
) -> None:
    """Move TARGET to a new release: pin edit (comments kept), regenerate, markdown report (wire diff, Python API changes, their uses in your code)."""  # noqa: E501 - typer prints it as the help, line breaks included
    from acp_codegen.api import upgrade_target

    with _running():
        plan = upgrade_target(
            target, to=to, dry_run=dry_run, pins=pins, out=out, code=() if no_code else code
        )
    if plan.identical:
        print(plan.summary(), file=sys.stderr)
        return
    if dry_run:
        sys.stdout.write(plan.pin_edit + "\n")
    if report is not None and not dry_run:
        write_atomic(report, plan.report())
    else:
        sys.stdout.write(plan.report())
    verb = "would upgrade" if dry_run else "upgraded"
    print(
        f"{verb} {plan.summary()}" + ("" if dry_run else f"; regenerated {plan.pin.package}"),
        file=sys.stderr,
    )


def migrate(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...", help="Files or directories of your code.", show_default=False
        ),
    ],
    old: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="REVISION",
            help="The revision your code was written against (source, path or pinned target).",
            show_default=False,
        ),
    ],
    new: Annotated[
        str,
        typer.Option(
            "--to", metavar="REVISION", help="The revision to move it to.", show_default=False
        ),
    ],
    check: Annotated[
        bool, typer.Option("--check", help="List the edits without writing (exit 1 if any).")
    ] = False,
    pins: PinsOption = None,
) -> None:
    """Rewrite renamed generated classes, attributes and handler methods in your code (libcst); list what needs a person."""  # noqa: E501 - typer prints it as the help, line breaks included
    from acp_codegen.api import migrate_code
    from acp_codegen.upgrade.migrate_run import render_listing

    with _running():
        results = migrate_code(paths, old=old, new=new, check=check, pins=pins)
    sys.stdout.write(render_listing(results, check=check))
    pending = check and any(r.result.edits for r in results)
    if pending or any(r.result.manual for r in results):
        raise typer.Exit(1)


ci_app = typer.Typer(
    no_args_is_help=True, help="Write CI workflows that keep the bindings in step with the schema."
)


@ci_app.command("github", epilog=epilog("ci github"))
def ci_github(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Workflow file to write ('-' for stdout).")
    ] = Path(".github/workflows/acp-codegen.yml"),
    pins: Annotated[
        Path, typer.Option("--pins", help="The project's pin file, relative to its root.")
    ] = Path("schema/pins.toml"),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "The project's output directory for generated packages (default: the pin file's "
                "`out`)."
            ),
            show_default=False,
        ),
    ] = None,
    install_from: Annotated[
        str | None,
        typer.Option(
            "--install-from",
            metavar="SOURCE",
            help=(
                "Where CI installs acp-codegen and acp-runtime: index, a VERSION, a git+URL, or a "
                "path in the project (a checkout, or the two wheels). Default: where this "
                "acp-codegen came from."
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """A GitHub Actions workflow: `generate --check` and `outdated` on pull requests; `upgrade` + diff annotations on a schedule."""  # noqa: E501 - typer prints it as the help, line breaks included
    from acp_codegen.upgrade.ci import render_github_workflow, write_workflow
    from acp_codegen.upgrade.ci_install import default_install_source, parse_install_from

    try:
        install = (
            parse_install_from(install_from, Path.cwd())
            if install_from
            else default_install_source(Path.cwd())
        )
        text = render_github_workflow(pins, out=out, install=install)
        if str(output) == "-":
            sys.stdout.write(text)
        else:
            changed = write_workflow(text, output)
    except CodegenError as error:
        _fail(error)
    for warning in install.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if str(output) != "-":
        print(f"{'wrote' if changed else 'unchanged:'} {output}", file=sys.stderr)
