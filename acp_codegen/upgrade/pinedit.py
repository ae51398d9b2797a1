"""Editing `schema/pins.toml` for an upgrade, keeping its comments and layout (tomlkit).

Owns the one edit an upgrade makes to a target: the new `source` and `sha256`, and the old pair
appended to the target's `history` (created when missing), each history entry an inline table
on its own line, spelled and indented like the entries already in the file. The edited text is
validated with `acp_codegen.pins` before anything is written; the write itself is atomic.
"""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, InlineTable, Table

from acp_codegen.atomic import write_atomic
from acp_codegen.errors import CodegenError, fail
from acp_codegen.pins import PinFile, PinnedSource, load_pins

_DEFAULT_INDENT = "  "


def _target_table(document: Any, name: str, path: Path) -> Table:
    targets = document.get("target")
    if isinstance(targets, AoT):
        for table in targets.body:
            if table.get("name") == name:
                return table
    raise fail("unknown-target", f"no [[target]] named {name!r}", file=str(path))


def _entry(source: str, sha256: str) -> InlineTable:
    """`{ source = "...", sha256 = "..." }` as the pin file spells history entries."""
    source_text = tomlkit.string(source).as_string()
    sha_text = tomlkit.string(sha256).as_string()
    text = f"x = {{ source = {source_text}, sha256 = {sha_text} }}\n"
    item = tomlkit.parse(text)["x"]
    assert isinstance(item, InlineTable)
    return item


def _indent(document: Any) -> str:
    """The indentation of history entries already in the file (two spaces otherwise)."""
    for line in tomlkit.dumps(document).splitlines():
        stripped = line.lstrip(" ")
        if stripped.startswith("{ source") and len(line) > len(stripped):
            return line[: len(line) - len(stripped)]
    return _DEFAULT_INDENT


def edited_pins(text: str, path: Path, target: str, new: PinnedSource) -> str:
    """The pin file text with `target` moved to `new` and its old source appended to history."""
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise fail("bad-pins", f"invalid TOML: {exc}", file=str(path)) from None
    table = _target_table(document, target, path)
    old = PinnedSource(str(table["source"]), str(table["sha256"]))
    history = table.get("history")
    if isinstance(history, Array):
        history.append(_entry(old.source, old.sha256))
    else:
        indent = _indent(document)
        snippet = f"history = [\n{indent}{_entry(old.source, old.sha256).as_string()},\n]\n"
        table["history"] = tomlkit.parse(snippet)["history"]
    table["source"] = new.source
    table["sha256"] = new.sha256
    return tomlkit.dumps(document)


def check_pins_text(text: str, path: Path) -> PinFile:
    """Validate edited pin file text exactly as `load_pins` would (through a temporary copy)."""
    with tempfile.TemporaryDirectory(prefix="acp-codegen-pins-") as tmp:
        probe = Path(tmp) / path.name
        probe.write_text(text, encoding="utf-8")
        try:
            return load_pins(probe)
        except CodegenError as error:
            first = error.diagnostics[0].message if error.diagnostics else "invalid"
            raise fail(
                "bad-pins",
                f"the edited pin file would not validate ({first}); nothing written",
                file=str(path),
            ) from None


def pin_diff(before: str, after: str, path: Path) -> str:
    """The planned edit as a unified diff."""
    name = path.name
    return "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}"
        )
    )


def write_text_atomic(path: Path, text: str) -> None:
    """Replace a file's text in one rename (a failure leaves the old file). The file keeps its
    mode; a new one gets the mode the umask gives (see `acp_codegen.atomic`)."""
    write_atomic(path, text)
