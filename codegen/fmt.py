"""Format stage: black, in process, with a content-addressed cache and parallel workers.

Owns turning rendered text into formatted source. Formatting is a pure function of (black
version, mode, text), so results are cached on disk under the sha256 of those inputs; a cold
run formats files in parallel worker processes when there are several large ones.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import black

from codegen.errors import fail

MODE = black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=100)
_PARALLEL_MIN_BYTES = 200_000
_BLACK_VERSION = importlib.metadata.version("black")


def _key(text: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"black={_BLACK_VERSION};mode={MODE!r}\n".encode())
    digest.update(text.encode())
    return digest.hexdigest()


def format_source(text: str, label: str = "<generated>") -> str:
    """Format one Python source text with black (raises CodegenError on invalid code)."""
    try:
        return black.format_str(text, mode=MODE)
    except Exception as exc:  # noqa: BLE001 - black raises several exception types for bad input
        raise fail("format-failed", f"black could not format generated code: {exc}", file=label) from None


def _format_pair(item: tuple[str, str]) -> str:
    return format_source(item[1], item[0])


def format_files(files: dict[str, str], cache_dir: Path | None) -> dict[str, str]:
    """Format every `.py` file of a rendered package; other files pass through unchanged."""
    out = dict(files)
    todo: dict[str, tuple[str, Path | None]] = {}
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        entry = cache_dir / _key(text) if cache_dir else None
        if entry is not None and entry.is_file():
            out[path] = entry.read_text(encoding="utf-8")
        else:
            todo[path] = (text, entry)
    big = [p for p, (t, _) in todo.items() if len(t) >= _PARALLEL_MIN_BYTES]
    workers = min(len(big), os.cpu_count() or 1)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = dict(zip(big, pool.map(_format_pair, [(p, todo[p][0]) for p in big])))
    else:
        done = {}
    for path, (text, entry) in sorted(todo.items()):
        formatted = done.get(path) or format_source(text, path)
        out[path] = formatted
        if entry is not None:
            _store(entry, formatted)
    return out


def _store(entry: Path, text: str) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, entry)
