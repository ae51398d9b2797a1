"""The pin file (`schema/pins.toml`): tracked schema targets, loaded and validated into `Pin`s."""

from __future__ import annotations

import keyword
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_codegen.errors import CodegenError, Diagnostic, fail, pointer_join
from acp_codegen.sources import PathSource, parse_source, user_project_pins

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_TOP_KEYS = ("default", "out", "vendor-runtime", "target")
_TARGET_KEYS = ("name", "package", "source", "sha256", "history", "unstable")
_HISTORY_KEYS = ("source", "sha256")


@dataclass(frozen=True)
class PinnedSource:
    """A source spec together with the sha256 its bytes must have."""

    source: str
    sha256: str


@dataclass(frozen=True)
class Pin:
    """One tracked target: where its schema comes from and which package it generates."""

    name: str
    package: str
    source: str
    sha256: str
    history: tuple[PinnedSource, ...] = ()
    unstable: PinnedSource | None = None
    """The unstable schema of the same protocol version: checked against, never generated."""

    @property
    def pinned(self) -> PinnedSource:
        """The current source and its sha256."""
        return PinnedSource(self.source, self.sha256)


@dataclass(frozen=True)
class PinFile:
    """A loaded pin file: its targets in file order, the name of the default one, and where and
    how they are generated (`out`, `vendor-runtime`)."""

    path: Path
    targets: tuple[Pin, ...]
    default: str
    out: str | None = None
    """The output directory, relative to the project root (the directory holding `schema/`)."""
    vendor_runtime: bool = False
    """Whether `generate` also writes the runtime package beside the bindings."""

    @property
    def out_dir(self) -> Path | None:
        """The output directory the file names (None: the default, `generated/`)."""
        return None if self.out is None else self.path.resolve().parent.parent / self.out

    def get(self, name: str) -> Pin | None:
        """The target called `name`, or None."""
        return next((pin for pin in self.targets if pin.name == name), None)

    @property
    def default_pin(self) -> Pin:
        """The default target (always present: `load_pins` checks it)."""
        pin = self.get(self.default)
        assert pin is not None
        return pin

    def __iter__(self) -> Iterator[Pin]:
        """Iterate over the targets in file order."""
        return iter(self.targets)


PIN_FILE = Path("schema") / "pins.toml"


def toolkit_pin_path() -> Path:
    """The pins the toolkit ships (`acp_codegen/default_pins.toml`: in this repository a link to
    its own `schema/pins.toml`, in a wheel that file's bytes)."""
    return Path(__file__).resolve().parent / "default_pins.toml"


def default_pin_path(start: Path | None = None) -> Path:
    """`schema/pins.toml` of the nearest directory from `start` (the current one) upward, else the
    toolkit's own.

    Run in a user's project, the commands read that project's pins, as git and ruff find their
    configuration; outside any project they fall back to the pins the toolkit ships.
    """
    return user_project_pins(start) or toolkit_pin_path()


def default_out_dir(start: Path | None = None) -> Path:
    """`generated/` beside the `schema/` directory found from `start` upward, else `./generated`."""
    pins = user_project_pins(start)
    return pins.parent.parent / "generated" if pins is not None else Path("generated")


def out_dir_for(pins_path: Path | None) -> Path:
    """Where the targets of a pin file are generated: its `out`; else, for a project's pin file
    (`<root>/schema/pins.toml`), `<root>/generated`; else `default_out_dir()`.

    A pin file that does not load falls back to the default (the command that reads the pins
    then reports why)."""
    if pins_path is None or pins_path.resolve() == toolkit_pin_path().resolve():
        return default_out_dir()
    try:
        pins = load_pins(pins_path)
    except CodegenError:
        pins = None
    if pins is not None and pins.out_dir is not None:
        return pins.out_dir
    if pins_path.parent.name == PIN_FILE.parent.name and pins_path.name == PIN_FILE.name:
        return pins_path.parent.parent / "generated"
    return default_out_dir()


def pinned_source(source: str, root: Path) -> str:
    """A source as a project's pin file records it: a local path relative to the project's root
    `root` when it lies inside it (commands run there), else absolute; other sources as they are."""
    spec = parse_source(source)
    if not isinstance(spec, PathSource):
        return source
    absolute, anchor = spec.path.resolve(), root.resolve()
    return os.path.relpath(absolute, anchor) if absolute.is_relative_to(anchor) else str(absolute)


def load_pins(path: Path) -> PinFile:
    """Read and validate a pin file; every problem found is reported in one CodegenError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail("file-not-found", "pin file not found", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail("bad-pins", f"cannot read pin file: {exc}", file=str(path)) from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail("bad-pins", f"invalid TOML: {exc}", file=str(path)) from None
    return _Checker(path).pin_file(table)


class _Checker:
    """Validates the parsed TOML of one pin file, collecting diagnostics."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[Diagnostic] = []

    def error(self, message: str, pointer: str) -> None:
        """Record one problem at a pointer into the pin file's structure."""
        self.problems.append(
            Diagnostic("error", "bad-pins", message, str(self.path), pointer or None)
        )

    def pin_file(self, table: dict[str, Any]) -> PinFile:
        """Check the top level and every target."""
        for key in table:
            if key not in _TOP_KEYS:
                self.error(
                    f"unknown top-level key {key!r} (expected {', '.join(_TOP_KEYS)})",
                    pointer_join("", key),
                )
        raw_targets = table.get("target", [])
        if not isinstance(raw_targets, list) or not raw_targets:
            self.error("expected at least one [[target]] table", "/target")
            raw_targets = []
        targets: list[Pin] = []
        for index, raw in enumerate(raw_targets):
            pin = self.target(raw, pointer_join("/target", index))
            if pin is None:
                continue
            for seen in targets:
                if seen.name == pin.name:
                    self.error(f"duplicate target name {pin.name!r}", f"/target/{index}/name")
                elif seen.package == pin.package:
                    self.error(
                        f"target {pin.name!r}: package {pin.package!r} is also "
                        f"generated by target {seen.name!r}",
                        f"/target/{index}/package",
                    )
            targets.append(pin)
        default = table.get("default", targets[0].name if targets else "")
        if not isinstance(default, str):
            self.error("'default' must be a string", "/default")
        elif targets and not any(pin.name == default for pin in targets):
            self.error(f"default target {default!r} is not defined", "/default")
        out = table.get("out")
        if out is not None and (not isinstance(out, str) or not out or Path(out).is_absolute()):
            self.error("'out' must be a non-empty path relative to the project root", "/out")
        vendor = table.get("vendor-runtime", False)
        if not isinstance(vendor, bool):
            self.error("'vendor-runtime' must be true or false", "/vendor-runtime")
        if self.problems:
            raise CodegenError(*self.problems)
        return PinFile(self.path, tuple(targets), str(default), out, bool(vendor))

    def target(self, raw: object, pointer: str) -> Pin | None:
        """Check one [[target]] table; None when it is unusable."""
        if not isinstance(raw, dict):
            self.error("each target must be a table", pointer)
            return None
        name = raw.get("name")
        who = f"target {name!r}" if isinstance(name, str) and name else f"target at {pointer}"
        before = len(self.problems)
        self.known_keys(raw, _TARGET_KEYS, who, pointer)
        name = self.string(raw, "name", who, pointer)
        package = self.string(raw, "package", who, pointer)
        if package is not None and not _is_dotted_identifier(package):
            self.error(
                f"{who}: package {package!r} is not a dotted Python identifier",
                pointer + "/package",
            )
        source, sha256 = self.pinned(raw, who, pointer)
        history: list[PinnedSource] = []
        raw_history = raw.get("history", [])
        if not isinstance(raw_history, list):
            self.error(f"{who}: 'history' must be a list of inline tables", pointer + "/history")
            raw_history = []
        for index, entry in enumerate(raw_history):
            where = pointer_join(pointer + "/history", index)
            if not isinstance(entry, dict):
                self.error(f"{who}: history entries must be {{ source, sha256 }} tables", where)
                continue
            self.known_keys(entry, _HISTORY_KEYS, who, where)
            old_source, old_sha = self.pinned(entry, who, where)
            if old_source is not None and old_sha is not None:
                history.append(PinnedSource(old_source, old_sha))
        unstable = self.unstable(raw.get("unstable"), who, pointer + "/unstable")
        if len(self.problems) > before:
            return None
        assert name is not None and package is not None
        assert source is not None and sha256 is not None
        return Pin(name, package, source, sha256, tuple(history), unstable)

    def unstable(self, raw: object, who: str, pointer: str) -> PinnedSource | None:
        """Check an optional `unstable = { source, sha256 }` table."""
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.error(f"{who}: 'unstable' must be an inline table {{ source, sha256 }}", pointer)
            return None
        self.known_keys(raw, _HISTORY_KEYS, who, pointer)
        source, sha256 = self.pinned(raw, who, pointer)
        return PinnedSource(source, sha256) if source is not None and sha256 is not None else None

    def pinned(self, raw: dict[str, Any], who: str, pointer: str) -> tuple[str | None, str | None]:
        """Check a `source` spec and its `sha256` (returned lower-cased)."""
        source = self.string(raw, "source", who, pointer)
        if source is not None:
            try:
                parse_source(source)
            except CodegenError as exc:
                for diag in exc.diagnostics:
                    self.error(f"{who}: {diag.message}", pointer + "/source")
        sha256 = self.string(raw, "sha256", who, pointer)
        if sha256 is not None and not _SHA256.fullmatch(sha256):
            self.error(f"{who}: sha256 must be 64 hex digits, got {sha256!r}", pointer + "/sha256")
        return source, None if sha256 is None else sha256.lower()

    def string(self, raw: dict[str, Any], key: str, who: str, pointer: str) -> str | None:
        """A required non-empty string value, or None after recording the problem."""
        value = raw.get(key)
        if value is None:
            self.error(f"{who}: missing key {key!r}", pointer)
            return None
        if not isinstance(value, str) or not value:
            self.error(f"{who}: {key!r} must be a non-empty string", pointer_join(pointer, key))
            return None
        return value

    def known_keys(self, raw: dict[str, Any], known: tuple[str, ...], who: str, ptr: str) -> None:
        """Report keys that the format does not define (usually typos)."""
        for key in raw:
            if key not in known:
                expected = ", ".join(known)
                self.error(f"{who}: unknown key {key!r} (expected {expected})", ptr)


def _is_dotted_identifier(text: str) -> bool:
    """True for `a.b_c`-style names whose parts are identifiers and not keywords."""
    parts = text.split(".")
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in parts)
