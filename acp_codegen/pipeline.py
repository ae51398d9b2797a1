"""The generation pipeline: load -> resolve -> IR -> render -> format -> write or check.

Owns the order of the stages and what a "target" is (a source plus an output package). Each
stage lives in its own module; this one only connects them and collects per-target results.
"""

from __future__ import annotations

import dataclasses
import json
import keyword
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from acp_codegen.errors import CodegenError, Diagnostic
from acp_codegen.fmt import format_files
from acp_codegen.ir.build import build_protocol
from acp_codegen.ir.methods import check_meta
from acp_codegen.ir.nodes import Protocol
from acp_codegen.load import LoadedSchema, load_document
from acp_codegen.pins import Pin, PinFile
from acp_codegen.progress import step
from acp_codegen.render.package import render_package
from acp_codegen.resolve import check_type_cycles, resolve
from acp_codegen.revisions import short_label
from acp_codegen.runtime_dist import RUNTIME_PACKAGE, runtime_files
from acp_codegen.sources import (
    PathSource,
    default_cache_dir,
    default_shared_dir,
    fetch,
    parse_source,
)
from acp_codegen.write import Drift, Recorded, check_package, recorded_source, write_package


@dataclass(frozen=True)
class Target:
    """One thing to generate: where the schema comes from and which package it becomes."""

    name: str
    package: str
    source: str
    sha256: str | None = None
    command: str | None = None  # what regenerates it (named in every file's header)

    @classmethod
    def from_pin(cls, pin: Pin) -> Target:
        """The target a pin describes."""
        return cls(
            pin.name, pin.package, pin.source, pin.sha256, f"acp-codegen generate {pin.name}"
        )

    @property
    def regenerate(self) -> str:
        """The command that regenerates this target's package, run from the directory holding it
        (`--out .`); what the pin or the caller says when they say it."""
        if self.command is not None:
            return self.command
        sha = f" --sha256 {self.sha256}" if self.sha256 else ""
        schema = shlex.quote(self.source)
        return f"acp-codegen generate --schema {schema}{sha} --package {self.package} --out ."


@dataclass(frozen=True)
class TargetResult:
    """What generating one target did."""

    target: Target
    written: int
    unchanged: int
    drift: Drift | None
    warnings: tuple[str, ...]
    seconds: float
    sha256: str = ""
    """The sha256 of the schema file the target was generated from."""


def load(source: str, sha256: str | None = None, *, offline: bool = False) -> LoadedSchema:
    """Load stage: fetch and parse one source (pinned sha256 verified when given)."""
    spec = parse_source(source)
    cache = default_cache_dir()
    fetched = fetch(
        spec,
        expected_sha256=sha256,
        cache_dir=cache,
        shared_dir=default_shared_dir(),
        offline=offline,
    )
    return load_document(fetched)


def build_ir(loaded: LoadedSchema) -> Protocol:
    """Resolve and build the IR; cross-check with a `meta*.json` beside a local schema file."""
    protocol = build_protocol(resolve(loaded))
    check_type_cycles(protocol, loaded.label)
    spec = parse_source(loaded.source)
    if isinstance(spec, PathSource):
        meta = spec.path.with_name(spec.path.name.replace("schema", "meta", 1))
        if meta != spec.path and meta.is_file():
            try:
                table = json.loads(meta.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise CodegenError(
                    Diagnostic("error", "invalid-json", f"invalid JSON: {exc}", str(meta), None)
                ) from None
            check_meta(protocol, table, str(meta))
    return protocol


def ir_for(source: str, sha256: str | None = None) -> Protocol:
    """Load + resolve + build for one source."""
    return build_ir(load(source, sha256))


def check_package_name(package: str) -> None:
    """Raise `bad-package` unless `package` is a dotted Python identifier (`a.b_c`).

    Besides making the package importable, this keeps every write inside the output directory:
    a name such as `./x` or `..x` would otherwise turn into a path outside it.
    """
    parts = package.split(".")
    if not all(part.isidentifier() and not keyword.iskeyword(part) for part in parts):
        raise CodegenError(
            Diagnostic(
                "error",
                "bad-package",
                f"package {package!r} is not a dotted Python identifier",
                "--package",
                None,
            )
        )


def package_dir(out_dir: Path, package: str) -> Path:
    """Where a (possibly dotted) package lives under the output directory."""
    check_package_name(package)
    return out_dir.joinpath(*package.split("."))


def render_target(
    target: Target, *, recorded: Recorded | None = None
) -> tuple[dict[str, str], Protocol]:
    """Every file of a target's package, rendered and formatted.

    `recorded`: what the package on disk names. When its sha256 is the one of the bytes loaded
    now, the package is rendered naming that source, and the command its header names when the
    target names none of its own: the same file reached another way (a path, a URL, an npm spec)
    generates the same package, so `--check` finds no drift.
    """
    with step(f"generating {target.package} from {short_label(target.source)}"):
        protocol = ir_for(target.source, target.sha256)
        regenerate = target.regenerate
        if recorded is not None and recorded.sha256 == protocol.sha256:
            if recorded.source != protocol.source:
                protocol = dataclasses.replace(protocol, source=recorded.source)
            if target.command is None and recorded.command is not None:
                regenerate = recorded.command
        return format_files(render_package(protocol, target.package, regenerate)), protocol


def generate(
    targets: Iterable[Target],
    out_dir: Path,
    *,
    check: bool = False,
    on_done: Callable[[TargetResult], None] | None = None,
) -> list[TargetResult]:
    """Generate (or check) every target; nothing is written for a target that fails."""
    targets = list(targets)
    for target in targets:  # before any work: a bad name must not cost a render, nor write
        check_package_name(target.package)
    rendered: list[tuple[Target, dict[str, str], Protocol, float]] = []
    for target in targets:  # render everything first: a failure writes nothing at all
        started = time.perf_counter()
        recorded = recorded_source(package_dir(out_dir, target.package)) if check else None
        files, protocol = render_target(target, recorded=recorded)
        rendered.append((target, files, protocol, time.perf_counter() - started))
    results: list[TargetResult] = []
    for target, files, protocol, seconds in rendered:
        directory = package_dir(out_dir, target.package)
        if check:
            drift: Drift | None = check_package(files, directory, target.package)
            written, unchanged = 0, len(files)
        else:
            drift = None
            written, unchanged = write_package(files, directory)
        result = TargetResult(
            target, written, unchanged, drift, protocol.warnings, seconds, protocol.sha256
        )
        results.append(result)
        if on_done is not None:
            on_done(result)
    return results


def vendor_runtime(out_dir: Path, *, check: bool = False) -> tuple[int, int, Drift | None]:
    """Write (or check) one copy of the runtime package, `OUT/acp_runtime/`, beside the bindings
    (`--vendor-runtime`): (written, unchanged, drift when checking)."""
    files = runtime_files()
    directory = out_dir / RUNTIME_PACKAGE
    if check:
        return 0, len(files), check_package(dict(files), directory, RUNTIME_PACKAGE)
    written, unchanged = write_package(dict(files), directory)
    return written, unchanged, None


def pinned_targets(pins: PinFile, names: Iterable[str] = ()) -> list[Target]:
    """Targets for the named pins (all pins when no names are given)."""
    wanted = list(names)
    if not wanted:
        return [Target.from_pin(p) for p in pins.targets]
    out: list[Target] = []
    for name in wanted:
        pin = pins.get(name)
        if pin is None:
            known = ", ".join(p.name for p in pins.targets)
            raise CodegenError(
                Diagnostic(
                    "error",
                    "unknown-target",
                    f"no pinned target {name!r} (known: {known})",
                    str(pins.path),
                    None,
                )
            )
        out.append(Target.from_pin(pin))
    return out
