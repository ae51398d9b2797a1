"""The library API: every CLI command as a function, what the CLI itself calls (docs/library.md).

Each function takes what the command's options say, as Python values (paths as `str` or
`Path`), returns a result object instead of printing, and raises `CodegenError` (its
`diagnostics` are what the CLI prints, one line each) instead of exiting. Defaults are the
CLI's: run in a project, the functions use its nearest `schema/pins.toml`, the output directory
it names (`generated/` beside `schema/` unless its `out` says otherwise) and its
`.cache/acp-codegen/`. Nothing is printed; progress goes to the sink
`acp_codegen.progress.reporting` installs, if any.

The names are verbs that do not collide with the toolkit's sub-packages (`acp_codegen.diff`,
`acp_codegen.scaffold`, `acp_codegen.upgrade` are modules): `generate`, `compare`,
`scaffold_project`, `track`, `find_outdated`, `upgrade_target`, `migrate_code`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from acp_codegen.errors import fail
from acp_codegen.pins import default_pin_path, load_pins, out_dir_for
from acp_codegen.write import Drift

if TYPE_CHECKING:
    from acp_codegen.diff.model import DiffResult
    from acp_codegen.pipeline import TargetResult
    from acp_codegen.scaffold.project import Scaffolded
    from acp_codegen.tracking import Tracked
    from acp_codegen.upgrade.apply import Plan
    from acp_codegen.upgrade.ci_install import InstallSource
    from acp_codegen.upgrade.migrate_run import FileResult
    from acp_codegen.upgrade.outdated import TargetStatus

PathLike = str | os.PathLike[str]
DEFAULT_PACKAGE = "acp_schema"
"""The package an ad-hoc `schema=` source is generated into unless `package=` names one."""


@dataclass(frozen=True)
class Generation:
    """What `generate` did (or, with `check=True`, found)."""

    out: Path
    results: tuple[TargetResult, ...]
    runtime: Drift | None
    """The vendored runtime's drift (checks with vendoring only)."""
    runtime_written: int = 0
    checked: bool = False

    @property
    def drifted(self) -> tuple[Drift, ...]:
        """Every package (the vendored runtime included) that differs from what would be
        generated."""
        found = [r.drift for r in self.results if r.drift is not None and not r.drift.clean]
        if self.runtime is not None and not self.runtime.clean:
            found.append(self.runtime)
        return tuple(found)

    @property
    def up_to_date(self) -> bool:
        """No drift at all (always true after a write)."""
        return not self.drifted

    @property
    def written(self) -> int:
        """Files written (0 when checking)."""
        return sum(r.written for r in self.results) + self.runtime_written


def _pins(pins: PathLike | None) -> Path:
    return Path(pins) if pins is not None else default_pin_path()


def generate(
    targets: Iterable[str] = (),
    *,
    schema: str | None = None,
    package: str | None = None,
    sha256: str | None = None,
    out: PathLike | None = None,
    pins: PathLike | None = None,
    check: bool = False,
    vendor_runtime: bool | None = None,
    on_done: Callable[[TargetResult], None] | None = None,
) -> Generation:
    """Generate the named pinned targets (all of them when none is named), or one ad-hoc `schema`
    source into `package` (default `acp_schema`), into `out`; with `check=True`, write nothing and
    report the drift. `vendor_runtime` (default: the pin file's `vendor-runtime`, false for an
    ad-hoc source) also writes, or checks, the runtime package `<out>/acp_runtime/`."""
    from acp_codegen.pipeline import Target, pinned_targets
    from acp_codegen.pipeline import generate as run
    from acp_codegen.pipeline import vendor_runtime as vendor

    names = list(targets)
    pins_path = _pins(pins)
    if schema is None:
        stray = [
            flag for flag, value in (("package", package), ("sha256", sha256)) if value is not None
        ]
        if stray:
            raise fail(
                "bad-option",
                f"{' and '.join(stray)} only appl{'y' if len(stray) > 1 else 'ies'} to an "
                "ad-hoc schema source",
                file="command line",
            )
        pin_file = load_pins(pins_path)
        chosen = pinned_targets(pin_file, names)
        vendoring = pin_file.vendor_runtime if vendor_runtime is None else vendor_runtime
        if vendoring and not pin_file.vendor_runtime:  # each header names what regenerates it all
            chosen = [replace(t, command=t.regenerate + " --vendor-runtime") for t in chosen]
        out_dir = Path(out) if out is not None else out_dir_for(pins_path)
    else:
        if names:
            raise fail(
                "bad-option",
                f"give pinned target names ({', '.join(names)}) or a schema source, not both",
                file="command line",
            )
        name = package if package is not None else DEFAULT_PACKAGE
        chosen = [Target(name, name, schema, sha256)]
        vendoring = bool(vendor_runtime)
        if vendoring:
            chosen = [replace(t, command=t.regenerate + " --vendor-runtime") for t in chosen]
        out_dir = Path(out) if out is not None else out_dir_for(None)
    results = run(chosen, out_dir, check=check, on_done=on_done)
    runtime_drift, runtime_written = None, 0
    if vendoring:
        runtime_written, _, runtime_drift = vendor(out_dir, check=check)
    return Generation(out_dir, tuple(results), runtime_drift, runtime_written, check)


def compare(old: str, new: str, *more: str, pins: PathLike | None = None) -> list[DiffResult]:
    """What changed from `old` to `new` (and on through `more`, pair by pair), and whom it breaks:
    one `DiffResult` per pair. Each revision is a source spec, a path or a pinned target name
    (`acp_codegen.revisions`)."""
    from acp_codegen.diff.run import diff_series
    from acp_codegen.revisions import Resolver

    resolver = Resolver(_pins(pins))
    return diff_series([resolver.resolve(arg) for arg in (old, new, *more)])


def compare_history(target: str, *, pins: PathLike | None = None) -> list[DiffResult]:
    """Each consecutive pair of a pinned target's history, ending at its current source."""
    from acp_codegen.diff.run import run_diff

    return run_diff([], series=True, history=target, pins_path=_pins(pins))


def scaffold_project(
    kind: Literal["agent", "client", "proxy"],
    directory: PathLike,
    *,
    name: str | None = None,
    schema: str | None = None,
    v1_schema: str | None = None,
    protocols: Sequence[int] | None = None,
    force: bool = False,
    vendor_runtime: bool = True,
    pins: PathLike | None = None,
    ci_install_from: str | InstallSource | None = None,
) -> Scaffolded:
    """Create an agent, client or proxy project in `directory` (the `scaffold` command). `schema`
    (default: the default pin) is the newest version's, `v1_schema` (default: the pinned acp_v1)
    the v1 bindings'; `protocols`: the versions spoken (default: 1 and 2; a proxy's only 2);
    `ci_install_from`: where the project's workflow installs acp-codegen, as
    `ci github --install-from` takes it (default: where it came from here)."""
    from acp_codegen.scaffold.bindings import default_protocols
    from acp_codegen.scaffold.project import scaffold
    from acp_codegen.upgrade.ci_install import parse_install_from

    install = (
        parse_install_from(ci_install_from, Path(directory))
        if isinstance(ci_install_from, str)
        else ci_install_from
    )
    return scaffold(
        kind,
        Path(directory),
        name=name,
        schema=schema,
        force=force,
        pins_path=_pins(pins),
        protocols=tuple(protocols) if protocols is not None else default_protocols(kind),
        v1_schema=v1_schema,
        vendor_runtime=vendor_runtime,
        ci_install=install,
    )


def track(
    source: str | None = None,
    *,
    name: str | None = None,
    package: str | None = None,
    project: PathLike | None = None,
    out: PathLike | None = None,
    vendor_runtime: bool = True,
) -> Tracked:
    """Start tracking `source` in a project (the `init` command): pin it with its sha256 in
    `schema/pins.toml` (created when missing), generate it, and say how to import it
    (`Tracked.import_hint()`)."""
    from acp_codegen.tracking import track as run

    return run(
        source,
        name=name,
        package=package,
        project=None if project is None else Path(project),
        out=None if out is None else Path(out),
        vendor=vendor_runtime,
    )


def find_outdated(
    targets: Iterable[str] = (), *, pins: PathLike | None = None, prereleases: bool = False
) -> list[TargetStatus]:
    """Which pinned npm sources have newer releases, and whether their file changed."""
    from acp_codegen.upgrade.outdated import check_targets

    pins_path = _pins(pins)
    pin_file = load_pins(pins_path)
    chosen = []
    for name in targets:
        pin = pin_file.get(name)
        if pin is None:
            raise fail("unknown-target", f"no pinned target {name!r}", file=str(pins_path))
        chosen.append(pin)
    return check_targets(chosen or list(pin_file), prereleases=prereleases)


def upgrade_target(
    target: str,
    *,
    to: str | None = None,
    dry_run: bool = False,
    pins: PathLike | None = None,
    out: PathLike | None = None,
    code: Iterable[PathLike] | None = None,
) -> Plan:
    """Move a pinned target to a new release (`to`: a version of its npm package or any source;
    default the newest): edit the pin, regenerate, and return the plan, whose `report()` is the
    markdown report. `dry_run` writes nothing. The report lists, `file:line`, where the code under
    `code` uses what changed (default: the project the pin file belongs to, whose generated and
    vendored packages are skipped; `()` for none)."""
    from acp_codegen.upgrade.apply import apply_plan, plan_upgrade

    pins_path = _pins(pins)
    paths = [Path(p) for p in code] if code is not None else _project_code(pins_path)
    plan = plan_upgrade(pins_path, target, to, code=paths)
    if not dry_run and not plan.identical:
        apply_plan(plan, Path(out) if out is not None else out_dir_for(pins_path))
    return plan


def _project_code(pins_path: Path) -> list[Path]:
    """The root of the project a pin file belongs to (`<root>/schema/pins.toml`), as shown from
    the current directory; none for the toolkit's own pins."""
    from acp_codegen.pins import toolkit_pin_path

    if pins_path.resolve() == toolkit_pin_path().resolve() or pins_path.parent.name != "schema":
        return []
    root = pins_path.resolve().parent.parent
    here = Path.cwd().resolve()
    return [Path(os.path.relpath(root, here)) if root.is_relative_to(here) else root]


def migrate_code(
    paths: Iterable[PathLike],
    *,
    old: str,
    new: str,
    check: bool = False,
    pins: PathLike | None = None,
) -> list[FileResult]:
    """Rewrite the user code under `paths` from the bindings of revision `old` to those of `new`
    (or, with `check=True`, only work out the edits); each result lists its edits and the uses
    that need a person, with their lines."""
    from acp_codegen.upgrade.migrate_run import load_changes, migrate_files, python_files

    files = python_files([Path(p) for p in paths])
    api, bindings = load_changes(old, new, _pins(pins))
    return migrate_files(files, api, bindings, check=check)
