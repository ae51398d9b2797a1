"""Format stage: black, in process, with a content-addressed cache and parallel workers.

Owns turning rendered text into formatted source. Formatting is a pure function of (black
version, mode, text), so results are cached on disk under the sha256 of those inputs.

A large file (models.py is ~11k lines) is split into pieces at top-level class and function
definitions, each piece is formatted on its own (in parallel worker processes when there is
enough work), and the pieces are joined with the two blank lines black puts before such a
definition. The result is byte-identical to formatting the whole file at once: a piece only
starts where black's output provably does not depend on what came before (see `split_points`).
Pieces are cached too, so a file that changed in a few definitions (a new schema revision, a
new header) re-formats only those.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import importlib.metadata
import itertools
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import black

from codegen.errors import fail

MODE = black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=100)
_BLACK_VERSION = importlib.metadata.version("black")
# Files at least this large are split into pieces; smaller ones are formatted whole.
_SPLIT_MIN_BYTES = 50_000
# Worker processes are started only when at least this much text needs formatting.
_PARALLEL_MIN_BYTES = 120_000
# Pieces are sent to the workers in about this many batches per worker (load balance).
_BATCHES_PER_WORKER = 4
_PIECE_JOIN = "\n\n"  # formatted pieces end in "\n": this leaves two blank lines between them


def _key(text: str, kind: str = "file") -> str:
    digest = hashlib.sha256()
    digest.update(f"black={_BLACK_VERSION};mode={MODE!r};{kind}\n".encode())
    digest.update(text.encode())
    return digest.hexdigest()


def _black(text: str) -> tuple[bool, str]:
    """(True, formatted) or (False, why black refused); never raises (safe in a worker)."""
    try:
        return True, black.format_str(text, mode=MODE)
    except Exception as exc:  # noqa: BLE001 - black raises several exception types for bad input
        return False, f"black could not format generated code: {exc}"


def format_source(text: str, label: str = "<generated>") -> str:
    """Format one Python source text with black (raises CodegenError on invalid code)."""
    ok, result = _black(text)
    if not ok:
        raise fail("format-failed", result, file=label)
    return result


def split_points(text: str) -> list[int]:
    """0-based line numbers where `text` can be cut into independently formatted pieces.

    A cut goes right before a top-level `class`/`def` (or its first decorator) when:
    - the previous top-level statement is not the module docstring,
    - between the two there is at least one line and every such line is blank (no comment).
    For such a line black always emits exactly two blank lines before it, whatever precedes
    (its other rules concern a preceding decorator, comment, or stub `def` with no blank line,
    all excluded here), and the formatting of the definition itself does not look backwards.
    Text that does not parse is never split (black reports the error on the whole file).
    """
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines()
    points: list[int] = []
    for index in range(1, len(body)):
        node, previous = body[index], body[index - 1]
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if index == 1 and isinstance(previous, ast.Expr) and isinstance(previous.value, ast.Constant):
            continue  # the module docstring has rules of its own
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        end = previous.end_lineno
        if end is None or start <= end:
            continue
        if all(not line.strip() for line in lines[end:start]):
            points.append(start)
    return points


def split_pieces(text: str) -> list[str]:
    """`text` cut at its `split_points` (a single piece for small or unsplittable text)."""
    if len(text) < _SPLIT_MIN_BYTES:
        return [text]
    points = split_points(text)
    if not points:
        return [text]
    lines = text.splitlines(keepends=True)
    bounds = [0, *points, len(lines)]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]


def _format_batch(batch: list[str]) -> list[tuple[bool, str]]:
    """Format texts with the cyclic garbage collector paused; failures come back as values.

    black builds large syntax trees full of reference cycles; left on, the collector walks
    them again and again and takes about a third of the formatting time. The garbage of a
    batch (~100 MB for models.py) is left to the next collection once the collector is back on.
    Errors are returned, not raised, so that they cross the process boundary intact.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return [_black(text) for text in batch]
    finally:
        if enabled:
            gc.enable()


def _batches(texts: list[str], count: int) -> list[list[str]]:
    """Consecutive runs of `texts` of about equal total size."""
    total = sum(map(len, texts)) or 1
    batches: list[list[str]] = [[]]
    size = 0
    for text in texts:
        if size >= total / count * len(batches) and batches[-1]:
            batches.append([])
        batches[-1].append(text)
        size += len(text)
    return batches


def _format_many(items: list[tuple[str, str]]) -> list[str]:
    """Format (label, text) items, in worker processes when there is enough work."""
    texts = [text for _, text in items]
    workers = min(os.cpu_count() or 1, len(items))
    results: list[tuple[bool, str]] | None = None
    if workers >= 2 and sum(map(len, texts)) >= _PARALLEL_MIN_BYTES:
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                batches = _batches(texts, workers * _BATCHES_PER_WORKER)
                results = [r for done in pool.map(_format_batch, batches) for r in done]
        except (OSError, NotImplementedError, BrokenProcessPool):
            results = None  # no worker processes here (sandbox, no semaphores): format in process
    if results is None:
        results = _format_batch(texts)
    for (label, _), (ok, result) in zip(items, results, strict=True):
        if not ok:
            raise fail("format-failed", result, file=label)
    return [result for _, result in results]


def format_files(files: dict[str, str], cache_dir: Path | None) -> dict[str, str]:
    """Format every `.py` file of a rendered package; other files pass through unchanged."""
    out = dict(files)
    pending: dict[str, list[str | None]] = {}  # path -> formatted pieces (None: not yet)
    pieces_of: dict[str, list[str]] = {}
    todo: list[tuple[str, int, str]] = []  # (path, piece index, text)
    for path, text in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        cached = _load(cache_dir, _key(text))
        if cached is not None:
            out[path] = cached
            continue
        pieces = split_pieces(text)
        pieces_of[path] = pieces
        pending[path] = []
        for index, piece in enumerate(pieces):
            hit = _load(cache_dir, _key(piece, "piece")) if len(pieces) > 1 else None
            pending[path].append(hit)
            if hit is None:
                todo.append((path, index, piece))
    formatted = _format_many([(path, piece) for path, _, piece in todo])
    for (path, index, piece), result in zip(todo, formatted):
        pending[path][index] = result
        if len(pieces_of[path]) > 1:
            _store(cache_dir, _key(piece, "piece"), result)
    for path, parts in pending.items():
        text = _PIECE_JOIN.join(p for p in parts if p is not None)
        out[path] = text
        _store(cache_dir, _key(files[path]), text)
    return out


def _load(cache_dir: Path | None, key: str) -> str | None:
    if cache_dir is None:
        return None
    try:
        return (cache_dir / key).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _store(cache_dir: Path | None, key: str, text: str) -> None:
    """Best-effort cache write: a read-only or full cache must not fail a generate."""
    if cache_dir is None:
        return
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, cache_dir / key)
    except OSError:
        pass
