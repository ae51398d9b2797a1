"""The `outdated`, `upgrade`, `migrate` and `ci` commands: options in, results printed, exit status out.

No logic here (it lives in the sibling modules). Every failure is a `CodegenError` printed once,
one line per diagnostic on stderr, exit status 2.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from acp_codegen.errors import CodegenError, fail
from acp_codegen.pins import Pin, default_out_dir, default_pin_path, load_pins

PinsOption = Annotated[Path | None, typer.Option(
    "--pins", help="Pin file listing the tracked targets (default: schema/pins.toml of the current directory or the "
    "nearest one above it, else the toolkit's own).", show_default=False)]


class OutdatedFormat(str, enum.Enum):
    """Output formats of `outdated`."""

    table = "table"
    json = "json"


def _fail(error: CodegenError) -> NoReturn:
    for diagnostic in error.diagnostics:
        print(diagnostic.render(), file=sys.stderr)
    raise typer.Exit(2)


def outdated(
    targets: Annotated[list[str] | None, typer.Argument(help="Pinned target names (default: all).", show_default=False)] = None,
    fmt: Annotated[OutdatedFormat, typer.Option("--format", help="table, or json for scripts.")] = OutdatedFormat.table,
    schema: Annotated[str | None, typer.Option("--schema", help="Check one ad-hoc npm:... source instead of pins.")] = None,
    sha256: Annotated[str | None, typer.Option("--sha256", help="sha256 of --schema's current file.")] = None,
    pre: Annotated[bool, typer.Option("--pre", help="Count pre-releases as newer releases.")] = False,
    pins: PinsOption = None,
) -> None:
    """Which pinned npm sources have newer releases, and whether their file changed (exit 1 if so)."""
    from acp_codegen.upgrade.outdated import any_outdated, check_targets, render_json, render_table

    pins = pins or default_pin_path()
    try:
        if schema is not None:
            chosen = [Pin("schema", "schema", schema, (sha256 or "").lower())]
        else:
            pin_file = load_pins(pins)
            chosen = list(pin_file) if not targets else [_pin(pin_file.get(t), t, pins) for t in targets]
        rows = check_targets(chosen, prereleases=pre)
    except CodegenError as error:
        _fail(error)
    sys.stdout.write(render_json(rows) if fmt is OutdatedFormat.json else render_table(rows))
    if any_outdated(rows):
        raise typer.Exit(1)


def _pin(pin: Pin | None, name: str, pins: Path) -> Pin:
    if pin is None:
        raise fail("unknown-target", f"no pinned target {name!r}", file=str(pins))
    return pin


def upgrade(
    target: Annotated[str, typer.Argument(help="The pinned target to upgrade.", show_default=False)],
    to: Annotated[str | None, typer.Option("--to", help="VERSION of the pinned npm package, or any SOURCE (default: the newest release).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the planned pin edit and the report; write nothing.")] = False,
    report: Annotated[Path | None, typer.Option("--report", help="Write the markdown report here (default: stdout).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output directory of the generated packages (default: generated/ beside the project's schema/).", show_default=False)] = None,
    pins: PinsOption = None,
) -> None:
    """Move TARGET to a new release: pin edit (comments kept), regenerate, markdown diff report."""
    from acp_codegen.upgrade.apply import apply_plan, plan_upgrade

    pins, out = pins or default_pin_path(), out or default_out_dir()
    try:
        plan = plan_upgrade(pins, target, to)
        if plan.identical:
            print(plan.summary(), file=sys.stderr)
            return
        if dry_run:
            sys.stdout.write(plan.pin_edit + "\n")
        else:
            apply_plan(plan, out)
    except CodegenError as error:
        _fail(error)
    if report is not None and not dry_run:
        report.write_text(plan.report(), encoding="utf-8")
    else:
        sys.stdout.write(plan.report())
    verb = "would upgrade" if dry_run else "upgraded"
    print(f"{verb} {plan.summary()}" + ("" if dry_run else f"; regenerated {plan.pin.package}"), file=sys.stderr)


def migrate(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories of your code.", show_default=False)],
    old: Annotated[str, typer.Option("--from", help="The revision your code was written against (source, path or pinned target).", show_default=False)],
    new: Annotated[str, typer.Option("--to", help="The revision to move it to.", show_default=False)],
    check: Annotated[bool, typer.Option("--check", help="List the edits without writing (exit 1 if any).")] = False,
    pins: PinsOption = None,
) -> None:
    """Rewrite renamed generated classes, attributes and handler methods in your code (libcst)."""
    from acp_codegen.upgrade.migrate_run import (
        load_changes,
        migrate_files,
        python_files,
        render_listing,
    )

    try:
        files = python_files(paths)
        api, bindings = load_changes(old, new, pins or default_pin_path())
        results = migrate_files(files, api, bindings, check=check)
    except CodegenError as error:
        _fail(error)
    sys.stdout.write(render_listing(results, check=check))
    pending = check and any(r.result.edits for r in results)
    if pending or any(r.result.manual for r in results):
        raise typer.Exit(1)


ci_app = typer.Typer(no_args_is_help=True, help="Write CI workflows that keep the bindings in step with the schema.")


@ci_app.command("github")
def ci_github(
    output: Annotated[Path, typer.Option("--output", "-o", help="Workflow file to write ('-' for stdout).")] = Path(".github/workflows/acp-codegen.yml"),
    pins: Annotated[Path, typer.Option("--pins", help="The project's pin file, relative to its root.")] = Path("schema/pins.toml"),
    out: Annotated[Path, typer.Option("--out", help="The project's output directory for generated packages.")] = Path("generated"),
    install: Annotated[str | None, typer.Option("--install", help="pip requirement that installs acp-codegen in CI [default: acp-codegen==<this version>].")] = None,
) -> None:
    """A GitHub Actions workflow: `generate --check` and `outdated` on pull requests; `upgrade` + diff annotations on a schedule."""
    from acp_codegen.upgrade.ci import render_github_workflow, write_workflow

    try:
        text = render_github_workflow(pins, out=out, install_spec=install)
        if str(output) == "-":
            sys.stdout.write(text)
            return
        changed = write_workflow(text, output)
    except CodegenError as error:
        _fail(error)
    print(f"{'wrote' if changed else 'unchanged:'} {output}", file=sys.stderr)
