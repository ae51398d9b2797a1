"""`acp-codegen init`: start tracking a schema in a project that has no pin for it yet.

Owns what starting to track means: choosing the source (a source spec, a path, or a target of
the pins this toolkit ships: `acp_v1`, `acp_v2`, `acp_v2_draft`; by default the shipped default
pin), fetching it and taking its sha256, adding a `[[target]]` to the project's
`schema/pins.toml` (created with a comment explaining the format, or appended to with its
comments kept), generating the package, and saying how to import it. Everything is fetched and
rendered before anything is written; if the package cannot be written, the pin file is put
back as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import tomlkit

from acp_codegen.api import DEFAULT_PACKAGE
from acp_codegen.errors import CodegenError, fail
from acp_codegen.pins import PIN_FILE, Pin, PinFile, load_pins, pinned_source, toolkit_pin_path
from acp_codegen.pipeline import (
    Target,
    check_package_name,
    load,
    package_dir,
    render_target,
    vendor_runtime,
)
from acp_codegen.revisions import Resolver, RevisionRef
from acp_codegen.runtime_dist import RUNTIME_PACKAGE, runtime_versions
from acp_codegen.sources import user_project_pins
from acp_codegen.upgrade.pinedit import check_pins_text, write_text_atomic
from acp_codegen.write import Recorded, write_package

NEW_PIN_FILE = """\
# The ACP schemas this project generates Python bindings from: acp-codegen's pin file, started by
# `acp-codegen init`. `acp-codegen generate` regenerates every target (`--check`: is it up to date?),
# `acp-codegen outdated` / `upgrade TARGET` follow new schema releases, `acp-codegen diff` and
# `migrate` take the target names.
#
# Top level (optional)
#   default          the target commands use when not given one (the first one otherwise).
#   out              the output directory, relative to the directory holding schema/ (default: generated).
#   vendor-runtime   true: `generate` also writes the runtime package, <out>/acp_runtime/.
#
# Each [[target]]
#   name      unique name of the target, what commands take.
#   package   dotted Python package the bindings are generated into (below the output directory).
#   source    npm:<package>@<version>#<path>, github:<owner>/<repo>@<commit>#<path>, an https:// URL,
#             or a local path (relative to the directory commands run in: run them at the root).
#   sha256    sha256 of the file's bytes; every fetch is checked against it.
#   history   optional: earlier { source = "...", sha256 = "..." } of the target, oldest first
#             (`acp-codegen upgrade` keeps it).
"""  # noqa: E501 - the pin file `init` writes: its lines are output, not code


@dataclass(frozen=True)
class Tracked:
    """What `init` did: the pin it added, where, and the package it generated."""

    root: Path
    pins_path: Path
    pin: Pin
    created: bool
    out_dir: Path
    written: int
    vendored: bool

    @property
    def package_path(self) -> Path:
        """The generated package's directory."""
        return self.out_dir.joinpath(*self.pin.package.split("."))

    def import_hint(self) -> list[str]:
        """How to import the package, as lines to print (the first is a command that does)."""
        top = self.pin.package.split(".")[0]
        out = _shown(self.out_dir, self.root)
        where = _shown(self.root, Path.cwd())
        lines = [
            f'import it: PYTHONPATH={out} python -c "import {self.pin.package}"'
            + ("" if where == "." else f"   (in {where})")
        ]
        if out != ".":
            lines.append(
                f"  in your own package: put {out}/ on the import path (setuptools: "
                f'[tool.setuptools.packages.find] where = [".", "{out}"]), or regenerate into '
                f'your source tree (`out = "src"` in {PIN_FILE.as_posix()})'
            )
        if self.vendored:
            lines.append(
                f"  {out}/{RUNTIME_PACKAGE}/ is the runtime {top} imports (a vendored copy: "
                "nothing to install but pydantic>=2.11)"
            )
        else:
            lines.append(
                f"  {top} imports acp_runtime: install acp-runtime{runtime_versions()} in your "
                "project's environment (or start with --vendor-runtime)"
            )
        return lines


def project_root(project: Path | None = None) -> Path:
    """The project to track in: `project`, else the nearest directory holding `schema/pins.toml`
    from the current one upward, else the current directory."""
    if project is not None:
        return project
    found = user_project_pins()
    return found.parent.parent if found is not None else Path.cwd()


def chosen_source(source: str | None) -> RevisionRef:
    """What `source` names (`acp_codegen.revisions`' precedence, target names being those of the
    pins the toolkit ships), or the shipped default pin."""
    resolver = Resolver(toolkit_pin_path())
    if source is None:
        pin = resolver.pins().default_pin
        return RevisionRef(pin.name, pin.source, pin.sha256, pin)
    return resolver.resolve(source)


def track(
    source: str | None = None,
    *,
    name: str | None = None,
    package: str | None = None,
    project: Path | None = None,
    out: Path | None = None,
    vendor: bool = True,
) -> Tracked:
    """Add a target for `source` to the project's pin file and generate it (see the module)."""
    root = project_root(project)
    pins_path = root / PIN_FILE
    ref = chosen_source(source)
    package = package or (ref.pin.package if ref.pin is not None else DEFAULT_PACKAGE)
    name = name or (ref.pin.name if ref.pin is not None and package == ref.pin.package else package)
    check_package_name(package)
    before = pins_path.read_text(encoding="utf-8") if pins_path.is_file() else None
    existing = load_pins(pins_path) if before is not None else None
    _refuse_taken(existing, name, package, pins_path)
    out_setting = _out_setting(out, root, existing)
    recorded = pinned_source(ref.source, root)
    loaded = load(ref.source, ref.sha256)
    pin = Pin(name, package, recorded, loaded.sha256)
    out_dir = root / (
        out_setting or (existing.out if existing is not None and existing.out else "generated")
    )
    # rendered naming the source as the pin file records it, so that `generate` rewrites nothing
    files, _ = render_target(
        replace(Target.from_pin(pin), source=ref.source), recorded=Recorded(recorded, loaded.sha256)
    )
    after = with_target(
        before, pin, out=out_setting, vendor=vendor and not (existing and existing.vendor_runtime)
    )
    check_pins_text(after, pins_path)
    _write_pins(pins_path, after)
    try:
        written, _ = write_package(files, package_dir(out_dir, package))
        vendored = vendor or (existing is not None and existing.vendor_runtime)
        if vendored:
            vendor_runtime(out_dir)
    except CodegenError:
        if before is None:
            pins_path.unlink(missing_ok=True)
        else:
            write_text_atomic(pins_path, before)
        raise
    return Tracked(root, pins_path, pin, before is None, out_dir, written, vendored)


def with_target(text: str | None, pin: Pin, *, out: str | None = None, vendor: bool = False) -> str:
    """The pin file `text` (None: a new one) with `pin` appended as a `[[target]]`, and the
    top-level `out` and `vendor-runtime` set when given; comments and layout kept."""
    document = tomlkit.parse(text if text is not None else NEW_PIN_FILE)
    if text is None:
        document["default"] = pin.name
    if out is not None:
        document["out"] = out
    if vendor:
        document["vendor-runtime"] = True
    body = tomlkit.dumps(document).rstrip("\n")
    table = "\n".join(
        f"{key} = {tomlkit.string(value).as_string()}"
        for key, value in (
            ("name", pin.name),
            ("package", pin.package),
            ("source", pin.source),
            ("sha256", pin.sha256),
        )
    )
    return f"{body}\n\n[[target]]\n{table}\n"


def _refuse_taken(existing: PinFile | None, name: str, package: str, pins_path: Path) -> None:
    if existing is None:
        return
    for pin in existing:
        if pin.name == name:
            raise fail(
                "already-tracked",
                f"target {name!r} is already pinned (to {pin.source}): `acp-codegen upgrade "
                f"{name} --to SOURCE` moves it, --name tracks another",
                file=str(pins_path),
            )
        if pin.package == package:
            raise fail(
                "already-tracked",
                f"package {package!r} is already generated by target {pin.name!r}: give "
                "another --package",
                file=str(pins_path),
            )


def _out_setting(out: Path | None, root: Path, existing: PinFile | None) -> str | None:
    """`out` as the pin file is to record it (relative to the project root), None for nothing to
    record; a project whose targets already go elsewhere is not moved by one `init`."""
    if out is None:
        return None
    try:
        relative = Path(os.path.relpath((Path.cwd() / out).resolve(), root.resolve())).as_posix()
    except ValueError:
        relative = ".."
    if relative.startswith(".."):
        raise fail("bad-option", f"--out {out} is outside the project {root}", file="--out")
    if existing is not None:
        current = existing.out or "generated"
        if Path(current).as_posix() != relative:
            raise fail(
                "bad-option",
                f"this project's targets are generated into {current}; --out {out} would "
                f"move them all (edit `out` in {PIN_FILE.as_posix()} to do that)",
                file="--out",
            )
        return None
    return None if relative == "generated" else relative


def _write_pins(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    except OSError as exc:
        raise fail(
            "write-failed", f"cannot write the pin file: {exc.strerror or exc}", file=str(path)
        ) from None


def _shown(path: Path, base: Path) -> str:
    """`path` relative to `base` when below it (`.` for `base` itself), else absolute."""
    resolved, anchor = path.resolve(), base.resolve()
    return (
        Path(os.path.relpath(resolved, anchor)).as_posix()
        if resolved.is_relative_to(anchor)
        else str(resolved)
    )
