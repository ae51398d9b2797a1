"""Format stage: black, in process, with a content-addressed cache and parallel workers.

Owns turning rendered text into formatted source. Formatting is a pure function of (black
version, mode, text), so results are cached on disk under the sha256 of those inputs.

A large file (dispatch.py is ~2k lines) is split into pieces at top-level class and function
definitions, each piece is formatted on its own (in parallel worker processes when there is
enough work), and the pieces are joined with the two blank lines black puts before such a
definition. The result is byte-identical to formatting the whole file at once: a piece only
starts where black's output provably does not depend on what came before (see `split_points`).
Pieces are cached too, so a file that changed in a few definitions (a new schema revision, a
new header) re-formats only those.

black formats a text a second time whenever its first pass changed something, so the renderers
emit black's own layout where they can (`acp_codegen.render.pytypes` for the models,
`acp_codegen.render.layout` for the templates' long signatures and calls): a piece that comes back
unchanged costs one pass, not two. A piece made only of shapes `acp_codegen.black_stable` knows to be
black's output (most of the models) costs no pass at all: it is taken as it is.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import itertools
import os
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Self

from acp_codegen.cache import cache_key, load_text, store_text
from acp_codegen.errors import fail
from acp_codegen.gc_pause import gc_paused

if TYPE_CHECKING:
    import black

LINE_LENGTH = 100  # the renderers lay long lines out for it too (`acp_codegen.render.pytypes`)
_BLACK_VERSION = importlib.metadata.version("black")
# Files at least this large are split into pieces; smaller ones are formatted whole.
_SPLIT_MIN_BYTES = 50_000
# Worker processes are started only when at least this much text needs formatting.
_PARALLEL_MIN_BYTES = 120_000
# Pieces are sent to the workers in about this many batches per worker (load balance).
_BATCHES_PER_WORKER = 4
_PIECE_JOIN = "\n\n"  # formatted pieces end in "\n": this leaves two blank lines between them


def _key(text: str, kind: str = "file") -> str:
    return cache_key(f"black={_BLACK_VERSION};line_length={LINE_LENGTH};target=py311;{kind}", text)


@functools.cache
def black_mode() -> black.Mode:
    """black's settings for generated code: Python 3.11, `LINE_LENGTH`."""
    # black is imported where it runs (the format workers, which import it in parallel with the
    # rendering that goes on meanwhile), not by every process that imports this module
    import black

    return black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=LINE_LENGTH)


def _black(text: str) -> tuple[bool, str]:
    """(True, formatted) or (False, why black refused); never raises (safe in a worker)."""
    import black

    try:
        return True, black.format_str(text, mode=black_mode())
    except Exception as exc:  # noqa: BLE001 - black raises several exception types for bad input
        return False, f"black could not format generated code: {exc}"


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


def split_pieces(text: str, *, min_bytes: int = _SPLIT_MIN_BYTES) -> list[str]:
    """`text` cut at its `split_points` (a single piece for text under `min_bytes` or unsplittable)."""
    if len(text) < min_bytes:
        return [text]
    points = split_points(text)
    if not points:
        return [text]
    lines = text.splitlines(keepends=True)
    bounds = [0, *points, len(lines)]
    # Without the blank lines that separate it from the next piece: black would drop them at the
    # end of a file, so a piece that is otherwise formatted already comes back unchanged and
    # black skips its second pass (it formats twice whatever the first pass changed).
    return ["".join(lines[a:b]).rstrip() + "\n" for a, b in itertools.pairwise(bounds)]


def _cut_after_head(rest: str) -> bool:
    """`rest` (what follows a known head) is two blank lines, then a top-level statement that is
    not a decorator nor a comment: black puts those two blank lines there whatever the head's last
    statement (a simple statement), so the rest is formatted on its own."""
    return rest.startswith("\n\n") and (rest[2:3].isalpha() or rest[2:3] == "_")


def _stable_pieces(text: str) -> list[tuple[str, bool]]:
    """[(text, True)] when black would leave `text` unchanged (`acp_codegen.black_stable`), else its
    pieces cut at every `split_points` cut, each with whether black would leave it unchanged."""
    from acp_codegen.black_stable import is_black_stable  # black's helpers: where black runs

    if is_black_stable(text):
        return [(text, True)]
    pieces = split_pieces(text, min_bytes=0)
    if len(pieces) == 1:
        return [(text, False)]
    return [(piece, is_black_stable(piece)) for piece in pieces]


def _format_piece(text: str) -> tuple[bool, str]:
    """black's output for `text`: the parts `acp_codegen.black_stable` knows to be black's output
    as they are, black on the others (`_stable_pieces`); (False, why) where black refuses."""
    out: list[str] = []
    for piece, stable in _stable_pieces(text):
        ok, formatted = (True, piece) if stable else _black(piece)
        if not ok:
            return ok, formatted
        out.append(formatted)
    return True, _PIECE_JOIN.join(out)


def _format_batch(batch: list[str]) -> list[tuple[bool, str]]:
    """Format texts (`_format_piece`) with the cyclic garbage collector paused; failures come
    back as values.

    black builds large syntax trees full of reference cycles; left on, the collector walks
    them again and again and takes about a third of the formatting time. The garbage of a
    batch (~100 MB for the draft's models) is left to the next collection once the collector is back on.
    Errors are returned, not raised, so that they cross the process boundary intact.
    """
    with gc_paused():
        return [_format_piece(text) for text in batch]


def _batches(todo: list[tuple[str, int, str]], count: int) -> list[list[tuple[str, int, str]]]:
    """Consecutive runs of `todo` (path, index, text) of about equal total text size."""
    total = sum(len(text) for _, _, text in todo) or 1
    batches: list[list[tuple[str, int, str]]] = [[]]
    size = 0
    for item in todo:
        if size >= total / count * len(batches) and batches[-1]:
            batches.append([])
        batches[-1].append(item)
        size += len(item[2])
    return [batch for batch in batches if batch]


class Formatter:
    """Formats rendered files, in worker processes when there is enough work, while the caller
    goes on rendering: `submit` returns at once, `result` waits for everything submitted.

    Use as a context manager (the worker pool is shut down on exit). Without worker processes
    (one CPU, a sandbox without semaphores, little text) formatting happens in `result`.
    """

    def __init__(self, cache_dir: Path | None, *, parallel_min_bytes: int = _PARALLEL_MIN_BYTES) -> None:
        self._cache_dir = cache_dir
        self._parallel_min_bytes = parallel_min_bytes
        self._files: dict[str, str] = {}  # path -> rendered text, in submission order
        self._done: dict[str, str] = {}  # path -> formatted text (whole-file cache hits, non-Python)
        self._pieces: dict[str, list[str]] = {}  # path -> its pieces
        self._formatted: dict[tuple[str, int], str] = {}  # (path, piece index) -> formatted piece
        self._jobs: list[tuple[list[tuple[str, int, str]], Future[list[tuple[bool, str]]] | None]] = []
        self._pool: ProcessPoolExecutor | None = None
        self._workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def submit(
        self,
        files: dict[str, str],
        *,
        formatted: frozenset[str] = frozenset(),
        heads: Mapping[str, str] | None = None,
    ) -> None:
        """Start formatting every `.py` file of `files`; other files, and those named in
        `formatted` (known to be black's output already), pass through unchanged.

        `heads`: path -> an opening of its text known to be black's output (a piece on its own,
        see `split_pieces`), or the whole text; only the rest of such a file is formatted, when a
        top-level statement follows the opening after exactly two blank lines (`_cut_after_head`).
        """
        todo: list[tuple[str, int, str]] = []  # (path, piece index, text)
        for path, text in files.items():
            self._files[path] = text
            if path in formatted:
                self._done[path] = text
                continue
            cached = load_text(self._cache_dir, _key(text)) if path.endswith(".py") else text
            if cached is not None:
                self._done[path] = cached
                continue
            head = (heads or {}).get(path)
            if head == text:  # known to be black's output whole
                self._done[path] = text
                continue
            rest = text[len(head) :] if head and text.startswith(head) else ""
            if head and head.endswith("\n") and _cut_after_head(rest):
                pieces = self._pieces[path] = [head, *split_pieces(rest.lstrip("\n"))]
                self._formatted[path, 0] = head
            else:
                pieces = self._pieces[path] = split_pieces(text)
            for index, piece in enumerate(pieces):
                if (path, index) in self._formatted:
                    continue
                hit = load_text(self._cache_dir, _key(piece, "piece")) if len(pieces) > 1 else None
                if hit is None:
                    todo.append((path, index, piece))
                else:
                    self._formatted[path, index] = hit
        pool = self._pool_for(sum(len(text) for _, _, text in todo))
        for batch in _batches(todo, self._workers * _BATCHES_PER_WORKER if pool else 1):
            future = None
            if pool is not None:
                try:
                    future = pool.submit(_format_batch, [text for _, _, text in batch])
                except BrokenProcessPool:  # a worker died (killed, out of memory): go on here
                    pool, self._workers = None, 1
            self._jobs.append((batch, future))

    def result(self) -> dict[str, str]:
        """Every submitted file, formatted (raises `format-failed` for code black refuses)."""
        for batch, future in self._jobs:
            results = None
            if future is not None:
                try:
                    results = future.result()
                except BrokenProcessPool:
                    results = None  # the workers died: format this batch here
            if results is None:
                results = _format_batch([text for _, _, text in batch])
            for (path, index, piece), (ok, text) in zip(batch, results, strict=True):
                if not ok:
                    raise fail("format-failed", text, file=path)
                self._formatted[path, index] = text
                if len(self._pieces[path]) > 1:
                    store_text(self._cache_dir, _key(piece, "piece"), text)
        self._jobs.clear()
        for path, pieces in self._pieces.items():
            text = _PIECE_JOIN.join(self._formatted[path, i] for i in range(len(pieces)))
            self._done[path] = text
            store_text(self._cache_dir, _key(self._files[path]), text)
        self._pieces.clear()
        return {path: self._done[path] for path in self._files}

    def _pool_for(self, size: int) -> ProcessPoolExecutor | None:
        """The worker pool (started on first need), or None to format in this process."""
        if self._pool is None and self._workers >= 2 and size >= self._parallel_min_bytes:
            try:
                self._pool = ProcessPoolExecutor(max_workers=self._workers)
            except (OSError, NotImplementedError):
                self._workers = 1  # no worker processes here (sandbox, no semaphores)
        return self._pool if size and self._workers >= 2 else None


def format_files(files: dict[str, str], cache_dir: Path | None) -> dict[str, str]:
    """Format every `.py` file of a rendered package; other files pass through unchanged."""
    with Formatter(cache_dir) as formatter:
        formatter.submit(files)
        return formatter.result()
