"""Known black-stable text: a fast, conservative test that black leaves a piece unchanged.

Owns one question of the format stage (`acp_codegen.fmt`): is this piece of rendered source (one or
more top-level statements, as `acp_codegen.fmt.split_pieces` cuts them) black's output already? The
answer is True only for text made entirely of the few shapes the renderers emit, each checked
the way black lays it out:

- a statement on one line that fits the line length, its tokens spaced as black spaces them;
- a bracket exploded one element per line because it ends in a magic trailing comma, or because
  its single element is such a bracket (black's right-hand split), each line fitting;
- a class or function docstring as black rewrites docstrings; other strings as written;
- blank lines where black puts them (two between top-level statements, one between statements
  of a class body, none inside a function body, none after a decorator or a class header).

Anything else (comments, backslashes, single quotes, operators split over lines, slices,
keywords beyond a handful, a line too long) answers False, and the piece goes to black. A wrong
True would be a layout black would not produce, so every accepted shape is held to black by
tests over every schema revision's output and by generated near-misses
(`tests/generator/test_black_stable.py`).

The modules: `tokens` (the piece as logical lines of known tokens), `blocks` (indentation,
blank lines, docstrings), `rows` (each logical line's rows: one row, or an exploded bracket)
and `spacing` (the whitespace black puts between two tokens).
"""

from __future__ import annotations

from black.strings import str_width

from acp_codegen.black_stable.blocks import blocks_ok
from acp_codegen.black_stable.rows import line_ok
from acp_codegen.black_stable.tokens import NEVER, code_rows, logical_lines
from acp_codegen.fmt import LINE_LENGTH

__all__ = ["is_black_stable"]


def is_black_stable(piece: str) -> bool:
    """True only if black (line length 100, Python 3.11) would return `piece` unchanged."""
    if not piece.endswith("\n") or piece.startswith(("\n", " ")) or NEVER.search(piece):
        return False
    lines = logical_lines(piece)
    if not lines:
        return False
    rows = piece.split("\n")
    if any(str_width(row) > LINE_LENGTH for row in code_rows(lines, rows)):
        return False
    return blocks_ok(lines) and all(line_ok(line, rows) for line in lines)

