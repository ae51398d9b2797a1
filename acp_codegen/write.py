"""Write or check stage: a rendered package against what is on disk.

Owns atomic replacement of a package directory (everything is written to a sibling temporary
directory, then swapped in; a failure leaves the old package untouched and stale files vanish
with it), drift reports (`--check`: a unified diff per changed, added or removed file, and its
`--stat` counts) and reading which source a package on disk says it was generated from.
"""

from __future__ import annotations

import ast
import difflib
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from acp_codegen.errors import fail


@dataclass(frozen=True)
class Drift:
    """How one package on disk differs from what would be generated."""

    package: str
    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    diff: str
    stats: tuple[tuple[str, int, int], ...] = ()
    """(file, lines added, lines removed) per file that differs, in the diff's order."""
    missing: bool = False
    """The package directory does not exist at all (every file would be added)."""

    @property
    def clean(self) -> bool:
        """No difference at all."""
        return not (self.changed or self.added or self.removed)

    def stat(self) -> str:
        """`git diff --stat`-like lines: ` file | +A -R` per file, then the totals."""
        if self.clean:
            return ""
        width = max(len(name) for name, _, _ in self.stats)
        lines = [f" {name.ljust(width)} | +{plus} -{minus}" for name, plus, minus in self.stats]
        plus, minus = sum(s[1] for s in self.stats), sum(s[2] for s in self.stats)
        lines.append(
            f" {len(self.stats)} file(s) changed, {plus} insertion(s)(+), {minus} deletion(s)(-)"
        )
        return "\n".join(lines) + "\n"


def _existing(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def check_package(files: dict[str, str], directory: Path, package: str) -> Drift:
    """Compare rendered files with a package directory; write nothing."""
    old = _existing(directory)
    new = {k: v.encode() for k, v in files.items()}
    changed = tuple(sorted(k for k in new if k in old and old[k] != new[k]))
    added = tuple(sorted(k for k in new if k not in old))
    removed = tuple(sorted(k for k in old if k not in new))
    chunks: list[str] = []
    stats: list[tuple[str, int, int]] = []
    for name in sorted({*changed, *added, *removed}):
        before = old.get(name, b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = files.get(name, "").splitlines(keepends=True)
        label = f"{directory.name}/{name}"
        from_label = f"a/{label}" if name in old else "/dev/null"
        to_label = f"b/{label}" if name in new else "/dev/null"
        lines = list(difflib.unified_diff(before, after, from_label, to_label))
        chunks.extend(lines)
        body = lines[2:]  # the two file lines carry no change
        plus = sum(1 for line in body if line.startswith("+"))
        minus = sum(1 for line in body if line.startswith("-"))
        stats.append((label, plus, minus))
    return Drift(
        package, changed, added, removed, "".join(chunks), tuple(stats), not directory.is_dir()
    )


@dataclass(frozen=True)
class Recorded:
    """What a generated package on disk says it was made from: its `__init__.py`'s `SOURCE` and
    `SHA256`, and the command its header names (`# Regenerate: ...`), when there is one."""

    source: str
    sha256: str
    command: str | None = None


_REGENERATE = "# Regenerate: "


def recorded_source(directory: Path) -> Recorded | None:
    """What the generated package in `directory` was made from, or None when there is no such
    package."""
    try:
        text = (directory / "__init__.py").read_bytes()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    if "SOURCE" not in found or "SHA256" not in found:
        return None
    command = None
    for line in text.decode("utf-8", "replace").splitlines():
        if not line.startswith("#"):
            break  # the header is the leading comment block
        if line.startswith(_REGENERATE):
            command = line[len(_REGENERATE) :]
    return Recorded(found["SOURCE"], found["SHA256"], command)


def write_package(files: dict[str, str], directory: Path) -> tuple[int, int]:
    """Atomically replace `directory` with exactly `files`; return (written, unchanged) counts.

    An OSError (unwritable or occupied output path, full disk) becomes a `write-failed`
    CodegenError; the old package is left in place.
    """
    try:
        return _write_package(files, directory)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = exc.filename if isinstance(exc.filename, str) else str(directory)
        raise fail(
            "write-failed", f"cannot write package: {reason} ({where})", file=str(directory)
        ) from None


def _write_package(files: dict[str, str], directory: Path) -> tuple[int, int]:
    old = _existing(directory)
    written = sum(1 for k, v in files.items() if old.get(k) != v.encode())
    if written == 0 and set(old) == set(files):
        return 0, len(files)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = _new_directory(directory.parent, f".{directory.name}-new-")
    backup_root: Path | None = None
    try:
        for name, text in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        if directory.exists() or directory.is_symlink():
            backup_root = _new_directory(directory.parent, f".{directory.name}-old-")
            backup = backup_root / directory.name
            os.replace(directory, backup)
            try:
                os.replace(staging, directory)
            except BaseException:
                os.replace(backup, directory)
                raise
        else:
            os.replace(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if backup_root is not None:
            shutil.rmtree(backup_root, ignore_errors=True)
    return written, len(files) - written


def _new_directory(parent: Path, prefix: str) -> Path:
    """A fresh, uniquely named directory in `parent` with the mode a plain `mkdir` gives (the
    umask applies; `tempfile.mkdtemp` would make it 0700, and the package keeps that mode)."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(8)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
