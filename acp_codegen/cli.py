"""Command-line interface (Typer). Holds no logic: parses options, calls the pipeline, prints.

Every failure arrives as a `CodegenError`; its diagnostics are printed once, one line each,
and the exit status is 2. `--check` drift exits 1.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from acp_codegen import __version__
from acp_codegen.errors import CodegenError
from acp_codegen.fast_exit import run_and_exit
from acp_codegen.pins import default_out_dir, default_pin_path, load_pins
from acp_codegen.sources import default_cache_dir, default_shared_dir, pull
from acp_codegen.ui import Reporter
from acp_codegen.upgrade.command import PinsOption

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Generate typed Python bindings from the ACP JSON Schema.")

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors and the summary line.")]


def _fail(error: CodegenError, reporter: Reporter) -> NoReturn:
    reporter.diagnostics(error.diagnostics)
    raise typer.Exit(2)


@app.command()
def generate(
    targets: Annotated[list[str] | None, typer.Argument(help="Pinned target names (default: all).")] = None,
    schema: Annotated[str | None, typer.Option("--schema", help="Ad-hoc source: path, URL, npm:... or github:...")] = None,
    package: Annotated[str | None, typer.Option("--package", help="Package name for --schema.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output directory (default: generated/ beside the project's schema/).", show_default=False)] = None,
    sha256: Annotated[str | None, typer.Option("--sha256", help="Expected sha256 of --schema.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; show drift as a diff, exit 1 if any.")] = False,
    vendor: Annotated[
        bool,
        typer.Option(
            "--vendor-runtime",
            help="Also write one copy of the runtime package, OUT/acp_runtime/, so the bindings work without installing acp-runtime.",
        ),
    ] = False,
    pins: PinsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Regenerate every pinned target (or one ad-hoc --schema) into OUT/<package>/."""
    from acp_codegen.pipeline import chosen_targets, vendor_runtime
    from acp_codegen.pipeline import generate as run

    reporter = Reporter(quiet=quiet)
    started = time.perf_counter()
    try:
        chosen = chosen_targets(pins or default_pin_path(), targets or (), schema=schema, package=package, sha256=sha256)
        if vendor:  # the command each header names regenerates the vendored runtime too
            chosen = [replace(t, command=t.regenerate + " --vendor-runtime") for t in chosen]
        out_dir = out or default_out_dir()
        results = run(chosen, out_dir, check=check, on_done=reporter.target_done)
        vendored = vendor_runtime(out_dir, check=check) if vendor else None
    except CodegenError as error:
        _fail(error, reporter)
    drifted = [r.drift for r in results if r.drift is not None and not r.drift.clean]
    if vendored is not None and vendored[2] is not None and not vendored[2].clean:
        drifted.append(vendored[2])
    for drift in drifted:
        sys.stdout.write(drift.diff)
    reporter.generate_summary(results, time.perf_counter() - started, check=check)
    if drifted:
        reporter.note("generated/ is out of date: run `nox -s regen` (or `acp-codegen generate`) and commit the result.")
        raise typer.Exit(1)


@app.command("pull")
def pull_command(
    history: Annotated[bool, typer.Option("--history", help="Also fetch each target's history.")] = False,
    pins: PinsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Fetch every pinned source into the cache and verify its sha256."""
    reporter = Reporter(quiet=quiet)
    started = time.perf_counter()
    try:
        fetched = pull(load_pins(pins or default_pin_path()), default_cache_dir(), default_shared_dir(), include_history=history)
    except CodegenError as error:
        _fail(error, reporter)
    for item in fetched:
        reporter.fetched(item)
    reporter.summary(f"pulled {len(fetched)} source(s) in {time.perf_counter() - started:.2f}s")


@app.command()
def version() -> None:
    """Print the generator version."""
    typer.echo(__version__)


def main() -> None:
    """Entry point of `acp-codegen` and `python -m acp_codegen`: the CLI, then a fast exit."""
    run_and_exit(app)

from acp_codegen.diff.command import diff as _diff

app.command("diff")(_diff)

from acp_codegen.scaffold.command import scaffold_app as _scaffold_app

app.add_typer(_scaffold_app, name="scaffold")

from acp_codegen.transcript.command import check_transcript as _check_transcript

app.command("check-transcript")(_check_transcript)

from acp_codegen.upgrade.command import outdated as _outdated
from acp_codegen.upgrade.command import upgrade as _upgrade

app.command("outdated")(_outdated)
app.command("upgrade")(_upgrade)

from acp_codegen.upgrade.command import migrate as _migrate

app.command("migrate")(_migrate)

from acp_codegen.upgrade.command import ci_app as _ci_app

app.add_typer(_ci_app, name="ci")

from acp_codegen.probe.command import probe_app as _probe_app

app.add_typer(_probe_app, name="probe")
