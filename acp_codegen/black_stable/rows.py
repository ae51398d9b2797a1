"""Rows of `acp_codegen.black_stable`: a logical line on one row, or a bracket exploded as black
explodes it (imports, signatures and headers as the renderers write them)."""

from __future__ import annotations

import functools
import re

from black.strings import str_width

from acp_codegen.black_stable.spacing import ATOM_KINDS, spacing_ok
from acp_codegen.black_stable.tokens import (
    CLOSERS,
    OPENERS,
    Line,
    Token,
    line_kind,
    opens_block,
)
from acp_codegen.fmt import LINE_LENGTH

_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_ALIAS = r"[A-Za-z_][A-Za-z0-9_]*(?: as [A-Za-z_][A-Za-z0-9_]*)?"
# An import on one row, spaced as black spaces it (no parentheses, no trailing comma).
_IMPORT = re.compile(
    rf"import {_DOTTED}(?: as [A-Za-z_][A-Za-z0-9_]*)?(?:, {_DOTTED}(?: as [A-Za-z_][A-Za-z0-9_]*)?)*"
    rf"|from (?:\.*{_DOTTED}|\.+) import (?:\*|{_ALIAS}(?:, {_ALIAS})*)"
)



def line_ok(line: Line, rows: list[str]) -> bool:
    """`line` (its physical `rows` among the piece's) is laid out and spaced as black would."""
    tokens = line.tokens
    kind = line_kind(line)
    if line.comment and (
        kind not in ("statement", "import") or opens_block(line) or tokens[-1].row != tokens[0].row
    ):
        return False  # an inline comment only at the end of a one-row statement
    if kind in ("string", "comment"):
        return True  # a docstring is checked where its position is known (`blocks_ok`)
    if kind == "import":
        text = "\n".join(rows[tokens[0].row : tokens[-1].row + 1])[line.indent :]
        if tokens[-1].row == tokens[0].row:
            return _IMPORT.fullmatch(text) is not None
        return _exploded_import(line.indent).fullmatch(text) is not None
    return _header_ok(tokens) and spacing_ok(tokens) and _layout_ok(tokens, line.indent)


@functools.cache
def _exploded_import(indent: int) -> re.Pattern[str]:
    """`from x import (` then one name per row, each with its comma (magic), then `)`."""
    names = rf"(?:\n{' ' * (indent + 4)}{_ALIAS},)+"
    return re.compile(rf"from (?:\.*{_DOTTED}|\.+) import \({names}\n{' ' * indent}\)")


def _header_ok(tokens: list[Token]) -> bool:
    """`class X(bases):` and `[async] def f(params) [-> T]:` (or a stub's `: ...`) as written."""
    texts = [t.text for t in tokens]
    if texts[0] == "class":
        if texts[-1] != ":" or texts.count(":") != 1:
            return False
        return len(texts) == 3 or (texts[2] == "(" and texts[3] != ")" and texts[-2] == ")")
    if texts[0] not in ("def", "async"):
        return True
    if texts[-1] == "...":
        texts = texts[:-1]
    return texts[-1] == ":" and "(" in texts



def _layout_ok(tokens: list[Token], indent: int) -> bool:
    """A statement over several rows is black's right-hand split of one bracket (see below)."""
    breaks = [index for index, token in enumerate(tokens) if token.starts_row and index]
    if not breaks:
        return True
    opener = breaks[0] - 1
    if (
        tokens[0].text in ("@", "class", "def", "async", "return")
        or tokens[opener].text not in OPENERS
    ):
        return False
    pairs = _pairs(tokens)
    closer = next(c for c, o in pairs.items() if o == opener)
    tail = tokens[closer + 1 :]
    if any(t.starts_row or t.text in OPENERS or t.text in CLOSERS for t in tail):
        return False
    texts = [t.text for t in tokens[:opener]]
    magic = tokens[closer - 1].text == ","
    if tail:
        # `name: Type[...,] = atom`: the annotation explodes (its magic comma decides) and the
        # value, one token, follows the closing bracket
        if not (magic and len(texts) == 3 and texts[1] == ":" and tokens[2].kind == "name"):
            return False
        if not _simple_value(tail):
            return False
    elif texts[1:2] == [":"] and len(texts) == 3 and tokens[2].kind == "name":
        pass  # `name: Type[` (an annotation without a value)
    else:
        # `target [: annotation] = value`, the value one bracketed atom: `name(`, `name[`, a display
        start = (
            opener - 1
            if tokens[opener].text != "{" and tokens[opener - 1].kind == "name"
            else opener
        )
        head = tokens[:start]
        if not head or head[-1].text != "=" or sum(t.text == "=" for t in head) != 1:
            return False
        if start != opener and tokens[start - 1].text != "=":
            return False
        if start == opener and tokens[opener].text == "(":
            return False  # a parenthesised value: black's optional parentheses
    return _exploded_ok(tokens, pairs, opener, closer, indent)


def _simple_value(tail: list[Token]) -> bool:
    """`= value` with a value black never splits: one atom, `...` or a dotted name."""
    if len(tail) < 2 or tail[0].text != "=":
        return False
    value = tail[1:]
    if len(value) == 1:
        return value[0].kind in ATOM_KINDS or value[0].text == "..."
    return (
        all(t.kind == "name" if i % 2 == 0 else t.text == "." for i, t in enumerate(value))
        and len(value) % 2 == 1
    )


def _pairs(tokens: list[Token]) -> dict[int, int]:
    """closer index -> opener index."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if token.text in OPENERS:
            stack.append(index)
        elif token.text in CLOSERS:
            pairs[index] = stack.pop()
    return pairs


def _exploded_ok(
    tokens: list[Token], pairs: dict[int, int], opener: int, closer: int, indent: int
) -> bool:
    """tokens[opener:closer+1] is exploded as black explodes it, its row starting at `indent`."""
    if not tokens[opener + 1].starts_row or not tokens[closer].starts_row:
        return False
    if len(tokens[closer].space) != indent:
        return False
    elements = _elements(tokens, pairs, opener + 1, closer)
    magic = tokens[closer - 1].text == ","
    subscript = (
        tokens[opener].text == "["
        and opener
        and (tokens[opener - 1].kind == "name" or tokens[opener - 1].text in (")", "]"))
    )
    if magic and subscript and len(elements) < 2:
        return False  # a one-element subscript's trailing comma is not magic
    if not magic and len(elements) != 1:
        return False
    for start, end in elements:  # end: the index after the element (its comma, or the closer)
        if not tokens[start].starts_row or len(tokens[start].space) != indent + 4:
            return False
        rows = [t for t in tokens[start + 1 : end] if t.starts_row]
        if not rows:
            if not magic:
                return False  # a single element on one row: black would join the bracket
            continue
        if rows[0].text == "|":
            if not _union_ok(tokens, start, end, indent + 4):
                return False
            continue
        # an element over several rows: `[name=]name(...)` or `[name=]name[...]` or a display
        last = end - 1
        inner = pairs.get(last)
        if inner is None:
            return False
        lead = tokens[start:inner]
        if len(lead) >= 2 and (lead[1].text, lead[0].kind) in (("=", "name"), (":", "str")):
            if not magic:
                return False  # a keyword argument or a dict entry: only as one of several
            lead = lead[2:]
        if lead and not (len(lead) == 1 and lead[0].kind == "name" and tokens[inner].text in "(["):
            return False
        if any(t.starts_row for t in tokens[start + 1 : inner + 1]):
            return False
        if not _exploded_ok(tokens, pairs, inner, last, indent + 4):
            return False
    return True


def _union_ok(tokens: list[Token], start: int, end: int, indent: int) -> bool:
    """An element `a | b | ...` too long for its row, split before each `|` (black's delimiter
    split at the element's strongest delimiter; its operands each on one row)."""
    depth, width = 0, indent
    for index in range(start, end + (tokens[end].text == ",")):
        token = tokens[index]
        if token.text in OPENERS:
            depth += 1
        elif token.text in CLOSERS:
            depth -= 1
        at_top = depth == 0 and token.text == "|"
        if index > start and token.starts_row != at_top:
            return False
        if at_top and len(token.space) != indent:
            return False
        width += str_width(token.text) + (1 if at_top else len(token.space) if index > start else 0)
    return width > LINE_LENGTH


def _elements(
    tokens: list[Token], pairs: dict[int, int], start: int, end: int
) -> list[tuple[int, int]]:
    """The comma-separated elements between start and end (a bracket's inside), as index spans."""
    spans: list[tuple[int, int]] = []
    depth, begin = 0, start
    for index in range(start, end):
        text = tokens[index].text
        if text in OPENERS:
            depth += 1
        elif text in CLOSERS:
            depth -= 1
        elif text == "," and depth == 0:
            spans.append((begin, index))
            begin = index + 1
    if begin < end:
        spans.append((begin, end))
    return spans

