"""Command-line interface (Typer). Holds no logic: parses options, calls the library API
(`acp_codegen.api`), prints.

Every failure arrives as a `CodegenError`; its diagnostics are printed once, one line each,
and the exit status is 2. `--check` drift exits 1. Steps that can take over a second show
rich's progress on stderr when it is a terminal (`-q` turns it off).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from acp_codegen import __version__
from acp_codegen.api import DEFAULT_PACKAGE
from acp_codegen.cli_help import TargetsArgument, epilog, show_flags_plainly
from acp_codegen.diff.command import diff as _diff
from acp_codegen.errors import CodegenError, fail
from acp_codegen.fast_exit import run_and_exit
from acp_codegen.pins import default_pin_path, load_pins, toolkit_pin_path
from acp_codegen.probe.command import probe_app as _probe_app
from acp_codegen.scaffold.command import scaffold_app as _scaffold_app
from acp_codegen.sources import default_cache_dir, default_shared_dir, pull
from acp_codegen.transcript.command import check_transcript as _check_transcript
from acp_codegen.ui import Reporter
from acp_codegen.upgrade.command import PinsOption
from acp_codegen.upgrade.command import ci_app as _ci_app
from acp_codegen.upgrade.command import migrate as _migrate
from acp_codegen.upgrade.command import outdated as _outdated
from acp_codegen.upgrade.command import upgrade as _upgrade

PROG = "acp-codegen"
show_flags_plainly()
app = typer.Typer(no_args_is_help=True, epilog=epilog(""))

QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Print only errors and the summary line (no diff, no progress)."
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Generate typed Python bindings from the ACP JSON Schema.

    Run in a project, every command reads its nearest schema/pins.toml (start one with
    `acp-codegen init`); outside any project, the pins this toolkit ships.
    """


def _fail(error: CodegenError, reporter: Reporter) -> NoReturn:
    reporter.diagnostics(error.diagnostics)
    raise typer.Exit(2)


@contextmanager
def _guarded(reporter: Reporter) -> Iterator[None]:
    """Show progress for the block; a `CodegenError` becomes its diagnostics and exit status 2."""
    try:
        with reporter.progress():
            yield
    except CodegenError as error:
        _fail(error, reporter)


@app.command(epilog=epilog("generate"))
def generate(
    targets: TargetsArgument = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            metavar="SOURCE",
            help="Ad-hoc source instead of the pins: path, URL, npm:... or github:...",
        ),
    ] = None,
    package: Annotated[
        str | None,
        typer.Option(
            "--package",
            help=f"Package name for --schema (default: {DEFAULT_PACKAGE}).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "Output directory (default: the pin file's `out`, else generated/ beside the "
                "project's schema/)."
            ),
            show_default=False,
        ),
    ] = None,
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="Expected sha256 of --schema.")
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Write nothing; show drift as a unified diff, exit 1 if any."),
    ] = False,
    stat: Annotated[
        bool,
        typer.Option(
            "--stat",
            help="With --check: per file, the lines added and removed instead of the diff.",
        ),
    ] = False,
    vendor: Annotated[
        bool | None,
        typer.Option(
            "--vendor-runtime/--no-vendor-runtime",
            help=(
                "Also write one copy of the runtime package, OUT/acp_runtime/, so the bindings "
                "work without installing acp-runtime (default: the pin file's `vendor-runtime`)."
            ),
            show_default=False,
        ),
    ] = None,
    pins: PinsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Regenerate every pinned target (or one ad-hoc --schema) into OUT/<package>/."""
    from acp_codegen.api import generate as run

    reporter = Reporter(quiet=quiet)
    started = time.perf_counter()
    with _guarded(reporter):
        _generate_usage(targets, schema, package, sha256)
        done = run(
            targets or (),
            schema=schema,
            package=package,
            sha256=sha256,
            out=out,
            pins=pins,
            check=check,
            vendor_runtime=vendor,
            on_done=reporter.target_done,
        )
    if not quiet:
        for drift in done.drifted:
            reporter.drift(drift, stat=stat)
    if schema is not None and sha256 is None and not check:  # what pinning it takes
        (result,) = done.results
        reporter.summary(
            f"{result.target.package}: {schema} has sha256 {result.sha256} "
            f"(`{PROG} init {shlex.quote(schema)} --package {result.target.package}` pins it)"
        )
    reporter.generate_summary(list(done.results), time.perf_counter() - started, check=check)
    if done.drifted:
        again = _regenerate_command(targets, schema, package, sha256, out, pins, vendor)
        here = (
            schema is None
            and (pins or default_pin_path()).resolve() == toolkit_pin_path().resolve()
        )
        also = (
            " (in acp-codegen's own repository: `nox -s regen`, which also refreshes the goldens)"
            if here
            else ""
        )
        reporter.note(f"out of date: run `{again}`{also} and commit the result.")
        raise typer.Exit(1)


def _generate_usage(
    targets: list[str] | None, schema: str | None, package: str | None, sha256: str | None
) -> None:
    """Options that would otherwise be ignored, as a usage error in the command line's terms."""
    if schema is None:
        stray = [
            flag
            for flag, value in (("--package", package), ("--sha256", sha256))
            if value is not None
        ]
        if stray:
            verb = "apply" if len(stray) > 1 else "applies"
            raise fail(
                "bad-option",
                f"{' and '.join(stray)} only {verb} to an ad-hoc --schema source",
                file="command line",
            )
    elif targets:
        raise fail(
            "bad-option",
            f"give pinned target names ({', '.join(targets)}) or --schema, not both",
            file="command line",
        )


def _regenerate_command(
    targets: list[str] | None,
    schema: str | None,
    package: str | None,
    sha256: str | None,
    out: Path | None,
    pins: Path | None,
    vendor: bool | None,
) -> str:
    """The `generate` command line that writes what `--check` compared against."""
    words = [PROG, "generate", *(targets or ())]
    for flag, value in (
        ("--schema", schema),
        ("--package", package),
        ("--sha256", sha256),
        ("--out", out),
        ("--pins", pins),
    ):
        if value is not None:
            words += [flag, str(value)]
    if vendor is not None:
        words.append("--vendor-runtime" if vendor else "--no-vendor-runtime")
    return shlex.join(words)


@app.command(epilog=epilog("init"))
def init(
    source: Annotated[
        str | None,
        typer.Argument(
            metavar="SOURCE",
            help=(
                "The schema to track: npm:..., github:..., a URL, a path, or a target this "
                "toolkit ships (acp_v2_draft, acp_v2, acp_v1; default: acp_v2_draft)."
            ),
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Target name (default: the package name).", show_default=False),
    ] = None,
    package: Annotated[
        str | None,
        typer.Option(
            "--package",
            help="Package to generate (default: the shipped target's, else acp_schema).",
            show_default=False,
        ),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            help=(
                "The project's root (default: the nearest directory above holding "
                "schema/pins.toml, else the current one)."
            ),
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "Output directory, inside the project (default: generated/; recorded in the pin "
                "file)."
            ),
            show_default=False,
        ),
    ] = None,
    vendor: Annotated[
        bool,
        typer.Option(
            "--vendor-runtime/--no-vendor-runtime",
            help=(
                "Also write the runtime package beside the bindings (nothing to install), or "
                "depend on acp-runtime."
            ),
        ),
    ] = True,
    quiet: QuietOption = False,
) -> None:
    """Start tracking a schema: pin it with its sha256 in schema/pins.toml, generate it, say how to import it."""  # noqa: E501 - typer prints it as the help, line breaks included
    from acp_codegen.api import track

    reporter = Reporter(quiet=quiet)
    with _guarded(reporter):
        done = track(
            source, name=name, package=package, project=project, out=out, vendor_runtime=vendor
        )
    pins = Path(done.pins_path).relative_to(done.root)
    reporter.summary(
        f"tracking {done.pin.name}: {done.pin.source} (sha256 {done.pin.sha256[:12]}…) in {pins}"
        + (" (new)" if done.created else "")
    )
    reporter.summary(
        f"generated {done.package_path.relative_to(done.root)}/ ({done.written} file(s) written)"
        + (f" and {done.out_dir.relative_to(done.root) / 'acp_runtime'}/" if done.vendored else "")
    )
    for line in done.import_hint():
        reporter.summary(line)
    reporter.summary(
        f"next: {PROG} generate --check (CI: {PROG} ci github), {PROG} outdated, "
        f"{PROG} upgrade {done.pin.name}"
    )


@app.command("pull", epilog=epilog("pull"))
def pull_command(
    history: Annotated[
        bool, typer.Option("--history", help="Also fetch each target's history.")
    ] = False,
    pins: PinsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Fetch every pinned source into the cache and verify its sha256."""
    reporter = Reporter(quiet=quiet)
    started = time.perf_counter()
    with _guarded(reporter):
        fetched = pull(
            load_pins(pins or default_pin_path()),
            default_cache_dir(),
            default_shared_dir(),
            include_history=history,
        )
    for item in fetched:
        reporter.fetched(item)
    reporter.summary(f"pulled {len(fetched)} source(s) in {time.perf_counter() - started:.2f}s")


@app.command()
def version() -> None:
    """Print the generator version (as --version does)."""
    typer.echo(__version__)


def main() -> None:
    """Entry point of `acp-codegen` and `python -m acp_codegen`: the CLI, then a fast exit."""
    run_and_exit(lambda: app(prog_name=PROG))


# The commands of their own modules, after this module's own so that `--help` lists them in
# this order.
app.command("diff", epilog=epilog("diff"))(_diff)
app.add_typer(_scaffold_app, name="scaffold")
app.command("check-transcript", epilog=epilog("check-transcript"))(_check_transcript)
app.command("outdated", epilog=epilog("outdated"))(_outdated)
app.command("upgrade", epilog=epilog("upgrade"))(_upgrade)
app.command("migrate", epilog=epilog("migrate"))(_migrate)
app.add_typer(_ci_app, name="ci")
app.add_typer(_probe_app, name="probe")
