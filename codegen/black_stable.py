"""Known black-stable text: a fast, conservative test that black leaves a piece unchanged.

Owns one question of the format stage (`codegen.fmt`): is this piece of rendered source (one or
more top-level statements, as `codegen.fmt.split_pieces` cuts them) black's output already? The
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
"""

from __future__ import annotations

import functools
import keyword
import re
from dataclasses import dataclass, field

from black.strings import fix_multiline_docstring, str_width

LINE_LENGTH = 100  # `codegen.fmt.LINE_LENGTH` (kept here: fmt imports this module)

# One token and the spaces before it (a piece is a run of these, nothing in between).
_TOKEN = re.compile(
    r"""(?P<sp>\ *)(?:(?P<nl>\n)|(?P<comment>\#[^\n]*)
    |(?P<str3>\"\"\"(?:[^"\\]|"(?!""))*\"\"\")|(?P<str>"[^"\\\n]*")
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?![0-9A-Za-z_.]))
    |(?P<op>->|\*\*|\.\.\.|[()\[\]{}:,.=|@*-]))""",
    re.VERBOSE,
)
# Characters black treats specially anywhere (tabs, other line breaks, form feeds, escapes).
_NEVER = re.compile(r"[\t\r\f\v\x00-\x08\x0e-\x1f\x7f\\\x85\u2028\u2029]")
# A comment black leaves as written: `#` then a space and text, nothing black reads in it.
_COMMENT = re.compile(r"#(?: (?!.*(?:fmt:|fmt :|yapf:|type:))[^\s\xa0].*(?<=\S))?")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())
_WORDS = frozenset(
    {"class", "def", "async", "return", "pass", "if", "not", "None", "True", "False"}
)
_ATOM_KINDS = frozenset({"name", "num", "str", "str3"})
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_ALIAS = r"[A-Za-z_][A-Za-z0-9_]*(?: as [A-Za-z_][A-Za-z0-9_]*)?"
# An import on one row, spaced as black spaces it (no parentheses, no trailing comma).
_IMPORT = re.compile(
    rf"import {_DOTTED}(?: as [A-Za-z_][A-Za-z0-9_]*)?(?:, {_DOTTED}(?: as [A-Za-z_][A-Za-z0-9_]*)?)*"
    rf"|from (?:\.*{_DOTTED}|\.+) import (?:\*|{_ALIAS}(?:, {_ALIAS})*)"
)


@dataclass(slots=True)
class _Token:
    kind: str  # nl-free: name, num, str, str3, op
    text: str
    row: int  # physical line of its first character
    space: str  # the whitespace before it on its line ("" at a line start)
    starts_row: bool


@dataclass(slots=True)
class _Line:
    """One logical line: its tokens and the blank lines before it."""

    indent: int
    blanks: int
    tokens: list[_Token] = field(default_factory=list)
    comment: str = ""  # an inline comment at its end


def is_black_stable(piece: str) -> bool:
    """True only if black (line length 100, Python 3.11) would return `piece` unchanged."""
    if not piece.endswith("\n") or piece.startswith(("\n", " ")) or _NEVER.search(piece):
        return False
    lines = _logical_lines(piece)
    if not lines:
        return False
    rows = piece.split("\n")
    if any(str_width(row) > LINE_LENGTH for row in _code_rows(lines, rows)):
        return False
    return _blocks_ok(lines) and all(_line_ok(line, rows) for line in lines)


def _logical_lines(piece: str) -> list[_Line] | None:
    """The piece as logical lines, or None for a character outside the known tokens."""
    lines: list[_Line] = []
    pos, row, depth, blanks, at_row_start = 0, 0, 0, 0, True
    current: _Line | None = None
    for match in _TOKEN.finditer(piece):
        if match.start() != pos:
            return None  # something no token matches
        pos = match.end()
        kind, space = match.lastgroup, match.group("sp")
        text = match.group(kind) if kind else ""
        if kind == "nl":
            if space:
                return None  # trailing whitespace
            if at_row_start and depth == 0 and current is None:
                blanks += 1
            elif at_row_start:
                return None  # a blank line inside a bracket
            if depth == 0:
                current = None
            row, at_row_start = row + 1, True
            continue
        if not kind:
            return None  # spaces at the end of the piece
        if kind == "comment":
            if not _COMMENT.fullmatch(text) or depth:
                return None
            if at_row_start and current is None:  # a comment on a row of its own
                lines.append(_Line(len(space), blanks, [_Token(kind, text, row, "", True)]))
                blanks = 0
            elif current is not None and not at_row_start and space == "  " and not current.comment:
                current.comment = text
            else:
                return None
            at_row_start = False
            continue
        if current is None:
            current = _Line(len(space) if at_row_start else -1, blanks)
            lines.append(current)
            blanks = 0
        # a continuation row's token carries that row's indentation as its space
        current.tokens.append(
            _Token(kind, text, row, space if not at_row_start or current.tokens else "", at_row_start)
        )
        if text in _OPENERS:
            depth += 1
        elif text in _CLOSERS:
            depth -= 1
            if depth < 0:
                return None
        if kind == "str3":
            row += text.count("\n")
        at_row_start = False
    if pos != len(piece):
        return None
    return lines if depth == 0 and current is None and blanks == 0 else None


def _code_rows(lines: list[_Line], rows: list[str]) -> list[str]:
    """The physical rows that hold code (the rows a multi-line string continues on excluded)."""
    inside: set[int] = set()
    for line in lines:
        for token in line.tokens:
            if token.kind == "str3":
                inside.update(range(token.row + 1, token.row + token.text.count("\n") + 1))
    return [row for index, row in enumerate(rows) if index not in inside]


def _opens_block(line: _Line) -> bool:
    return line.tokens[-1].text == ":"


def _kind(line: _Line) -> str:
    """decorator, def, class, import, string or statement: what black's blank-line rules see."""
    first = line.tokens[0]
    if first.kind == "comment":
        return "comment"
    if first.text == "@":
        return "decorator"
    if first.kind == "name" and first.text in ("def", "class", "import", "from", "if"):
        return "import" if first.text == "from" else first.text
    if first.text == "async" and len(line.tokens) > 1 and line.tokens[1].text == "def":
        return "def"
    return "string" if len(line.tokens) == 1 and first.kind in ("str", "str3") else "statement"


def _blocks_ok(lines: list[_Line]) -> bool:
    """Indentation follows the blocks, every docstring is black's, every blank-line count is one
    black keeps (`EmptyLineTracker._maybe_empty_lines`, non-stub mode, no comments)."""
    blocks: list[str] = []  # "class" | "def" of each open block
    defs: list[int] = []  # depths of the class and def lines seen (black's `previous_defs`)
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else None
        if line.indent < 0 or line.indent % 4:
            return False
        if previous is None or not _opens_block(previous):
            del blocks[line.indent // 4 :]
        if line.indent != len(blocks) * 4:
            return False
        depth = len(blocks)
        closed = bool(defs) and defs[-1] >= depth
        while defs and defs[-1] >= depth:
            defs.pop()
        kind = _kind(line)
        if kind in ("def", "class"):
            defs.append(depth)
        if kind == "comment" and not _comment_placed(lines, index):
            return False
        if line.blanks not in _blank_counts(lines, index, depth, kind, closed):
            return False
        docstring = kind == "string" and (
            _is_module_docstring(lines, index) or previous is not None and _opens_block(previous)
        )
        if docstring and not _docstring_ok(line.tokens[0].text, line.indent):
            return False
        if _opens_block(line):
            if (
                kind not in ("class", "def", "if")
                or (kind in ("class", "if") and depth)
                or depth > 1
            ):
                return False
            blocks.append(kind)
    return True


def _is_module_docstring(lines: list[_Line], index: int) -> bool:
    """lines[index] is a string with nothing but comments before it."""
    if _kind(lines[index]) != "string" or lines[index].indent:
        return False
    return all(_kind(line) == "comment" for line in lines[:index])


def _comment_placed(lines: list[_Line], index: int) -> bool:
    """A comment on its own row sits where black keeps it: at column 0, before a top-level
    statement (black indents a comment as the statement it precedes), not after a header or a
    decorator."""
    if index and (_kind(lines[index - 1]) == "decorator" or _opens_block(lines[index - 1])):
        return False
    return lines[index].indent == 0 and all(
        line.indent == 0 for line in lines[index + 1 : index + 2]
    )


def _blank_counts(lines: list[_Line], index: int, depth: int, kind: str, closed: bool) -> range:
    """The blank-line counts before `lines[index]` that black leaves as they are."""
    if index == 0:
        return range(1)
    previous = lines[index - 1]
    previous_kind = _kind(previous)
    most = 2 if depth == 0 else 1
    after_docstring = _is_module_docstring(lines, index - 1) or (
        previous_kind == "string" and index >= 2 and _kind(lines[index - 2]) == "class"
    )  # black puts one blank line after a module or class docstring
    if _opens_block(previous) and kind not in ("comment", "decorator", "def", "class"):
        return range(
            1
        )  # the first statement of a block (a docstring or not) right after its header
    if kind in ("decorator", "def", "class"):
        if (
            previous_kind == "decorator"
            or _opens_block(previous)
            and previous_kind in ("class", "def")
        ):
            return range(1)
        wanted = 1 if depth else 2
        return range(wanted, wanted + 1)
    if closed or after_docstring:
        wanted = 1 if depth or (after_docstring and not closed) else 2
        return range(wanted, wanted + 1)
    if previous_kind == "import" and kind != "import":
        return range(1, 2) if depth == 0 else range(1, most + 1)
    return range(most + 1)


def _docstring_ok(value: str, indent: int) -> bool:
    """black's rewrite of a class or function docstring (`linegen.visit_STRING`) is `value`."""
    quote = '"""' if value.startswith('"""') else '"'
    docstring = value[len(quote) : -len(quote)]
    prefix = " " * indent
    if not docstring:
        return False
    docstring = (
        fix_multiline_docstring(docstring, prefix)
        if quote == '"""' and "\n" in value
        else docstring.strip()
    )
    if not docstring:
        return False
    if docstring[0] == '"':
        docstring = " " + docstring
    if docstring[-1] == '"':
        docstring += " "
    rows = docstring.splitlines()
    last = len(rows[-1]) if not docstring.endswith("\n") else 0
    if quote == '"""' and len(rows) > 1 and last + 3 > LINE_LENGTH and indent + 3 <= LINE_LENGTH:
        if value[-4] == "\n":
            return value == quote + docstring + quote
        return value == quote + docstring + "\n" + prefix + quote
    return value == quote + docstring + quote


def _line_ok(line: _Line, rows: list[str]) -> bool:
    tokens = line.tokens
    kind = _kind(line)
    if line.comment and (
        kind not in ("statement", "import") or _opens_block(line) or tokens[-1].row != tokens[0].row
    ):
        return False  # an inline comment only at the end of a one-row statement
    if kind in ("string", "comment"):
        return True  # a docstring is checked where its position is known (`_blocks_ok`)
    if kind == "import":
        text = "\n".join(rows[tokens[0].row : tokens[-1].row + 1])[line.indent :]
        if tokens[-1].row == tokens[0].row:
            return _IMPORT.fullmatch(text) is not None
        return _exploded_import(line.indent).fullmatch(text) is not None
    return _header_ok(tokens) and _spacing_ok(tokens) and _layout_ok(tokens, line.indent)


@functools.cache
def _exploded_import(indent: int) -> re.Pattern[str]:
    """`from x import (` then one name per row, each with its comma (magic), then `)`."""
    names = rf"(?:\n{' ' * (indent + 4)}{_ALIAS},)+"
    return re.compile(rf"from (?:\.*{_DOTTED}|\.+) import \({names}\n{' ' * indent}\)")


def _header_ok(tokens: list[_Token]) -> bool:
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


def _spacing_ok(tokens: list[_Token]) -> bool:
    """Every token is one black knows here, spaced on its row as black spaces it."""
    brackets: list[tuple[str, str]] = []  # (opener, role): call, sub, list, dict, params, bases
    word = tokens[0].text
    annotated = False  # in a `def`'s parameters: the current parameter has an annotation
    previous: _Token | None = None
    for index, token in enumerate(tokens):
        text, kind = token.text, token.kind
        if kind == "str3":
            return False  # a multi-row string inside a statement: black's rules are its own
        if kind == "name" and keyword.iskeyword(text) and text not in _WORDS:
            return False
        if kind == "name" and text in _WORDS - {"None", "True", "False"} and not _word_ok(tokens, index):
            return False
        expected = _space(previous, token, brackets, word, annotated, index)
        if expected is None:
            return False
        if not token.starts_row and token.space != expected:
            return False
        after_separator = previous is None or previous.text in _OPENERS or previous.text == ","
        if token.starts_row and index and not after_separator and text not in _CLOSERS and text != "|":
            return False  # a row may only start after an opener or a comma, or with a `|`
        if text in _OPENERS:
            brackets.append((text, _role(previous, text, word, brackets)))
            annotated = False
        elif text in _CLOSERS:
            opener, _ = brackets.pop()
            if _OPENERS[opener] != text:
                return False
            if previous is not None and previous.text == "," and not token.starts_row:
                return False  # a magic trailing comma on one row: black explodes it
        elif text == "," and brackets and brackets[-1][1] == "params":
            annotated = False
        elif text == ":" and brackets and brackets[-1][1] == "params":
            annotated = True
        previous = token
    return not brackets


def _word_ok(tokens: list[_Token], index: int) -> bool:
    """The few keywords allowed, each only where the renderers put it."""
    text = tokens[index].text
    nxt = tokens[index + 1] if index + 1 < len(tokens) else None
    if text == "async":
        return index == 0 and nxt is not None and nxt.text == "def"
    if text in ("class", "def"):
        return (
            (index == 0 or (index == 1 and tokens[0].text == "async"))
            and nxt is not None
            and nxt.kind == "name"
        )
    if text == "pass":
        return len(tokens) == 1
    if text in ("if", "not"):  # `if [not] NAME:` (`if TYPE_CHECKING:`)
        texts = [t.text for t in tokens]
        shape = len(tokens) == 3 or len(tokens) == 4 and texts[1] == "not"
        return (
            shape
            and texts[0] == "if"
            and tokens[-2].kind == "name"
            and texts[-1] == ":"
            and index < 2
        )
    return index == 0 and (nxt is None or nxt.text not in ("(", "-", "*", "**"))  # return


def _role(previous: _Token | None, opener: str, word: str, brackets: list[tuple[str, str]]) -> str:
    after_name = previous is not None and (previous.kind == "name" or previous.text in (")", "]"))
    if opener == "(" and after_name:
        if (
            not brackets
            and word in ("def", "async")
            and previous is not None
            and previous.kind == "name"
        ):
            return "params"
        return "bases" if not brackets and word == "class" else "call"
    if opener == "[":
        return "sub" if after_name else "list"
    if opener == "{":
        return "dict"
    return "tuple"  # a parenthesised expression: black may remove or keep it; not accepted


def _space(
    previous: _Token | None,
    token: _Token,
    brackets: list[tuple[str, str]],
    word: str,
    annotated: bool,
    index: int,
) -> str | None:
    """The whitespace black puts before `token`, or None where this module does not know."""
    text, kind = token.text, token.kind
    inner = brackets[-1][1] if brackets else ""
    if previous is None:
        return ""
    prev = previous.text
    if kind == "str" and previous.kind in ("str", "str3", "name"):
        return None  # implicit concatenation or a string prefix
    if text in _OPENERS:
        if text == "(" and not (
            previous.kind == "name" and prev not in _WORDS or prev in (")", "]")
        ):
            return None  # a tuple or parenthesised expression
        if text == "(" and prev in ("class",):
            return None
        if previous.kind == "name" and prev not in _WORDS or prev in (")", "]"):
            return "" if text != "{" else None
        if prev in _OPENERS or prev == "-":
            return ""
        if prev in (",", ":", "=", "|", "return"):
            return _after(prev, inner, annotated)
        return None
    if text in _CLOSERS:
        return ""
    if text == ",":
        return "" if prev not in _OPENERS and prev != "," else None
    if text == ":":
        if inner in ("sub", "list", "call", "tuple", "bases"):
            return None  # slices, lambdas, walrus: not known here
        return "" if prev not in _OPENERS and prev != "," else None
    if text == ".":
        return "" if (previous.kind == "name" or prev in (")", "]")) else None
    if text == "=":
        if prev in _OPENERS or prev in (",", "=", ":", "|", "->"):
            return None
        if inner in ("call", "bases"):
            return ""
        if inner == "params":
            return " " if annotated else ""
        return " " if not brackets else None
    if text in ("|", "->"):
        if prev in _OPENERS or prev in (",", "=", ":", "|", "->", "@", "*", "**"):
            return None
        if text == "->" and (brackets or word not in ("def", "async")):
            return None
        return " "
    if text == "@":
        return None  # only a decorator's first token (index 0)
    if text in ("*", "**", "-"):
        # unary only: `*args`, a bare `*`, `**kwargs`, `{**x}`, `-1`
        if text == "-" and prev not in _OPENERS and prev not in (",", "=", ":", "|"):
            return None
        if text in ("*", "**") and not (
            prev in ("(", ",", "{") and inner in ("call", "params", "dict")
        ):
            return None
        return "" if prev in _OPENERS else _after(prev, inner, annotated)
    # an atom: name, number, string, `...`
    if prev in _OPENERS or prev == ".":
        return "" if not (prev == "." and kind != "name") else None
    if prev == "-":
        return "" if kind in ("num", "name") else None
    if prev in ("*", "**"):
        return "" if kind == "name" else None
    if prev == "@":
        return "" if kind == "name" and index == 1 else None
    if prev in (",", ":", "=", "|", "->"):
        return _after(prev, inner, annotated)
    if previous.kind == "name" and prev in _WORDS and kind in _ATOM_KINDS | {"op"}:
        return " "
    return None


def _after(prev: str, inner: str, annotated: bool) -> str:
    """The space after a separator or operator."""
    if prev == "=":
        if inner in ("call", "bases"):
            return ""
        if inner == "params":
            return " " if annotated else ""
    return " "


def _layout_ok(tokens: list[_Token], indent: int) -> bool:
    """A statement over several rows is black's right-hand split of one bracket (see below)."""
    breaks = [index for index, token in enumerate(tokens) if token.starts_row and index]
    if not breaks:
        return True
    opener = breaks[0] - 1
    if (
        tokens[0].text in ("@", "class", "def", "async", "return")
        or tokens[opener].text not in _OPENERS
    ):
        return False
    pairs = _pairs(tokens)
    closer = next(c for c, o in pairs.items() if o == opener)
    tail = tokens[closer + 1 :]
    if any(t.starts_row or t.text in _OPENERS or t.text in _CLOSERS for t in tail):
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


def _simple_value(tail: list[_Token]) -> bool:
    """`= value` with a value black never splits: one atom, `...` or a dotted name."""
    if len(tail) < 2 or tail[0].text != "=":
        return False
    value = tail[1:]
    if len(value) == 1:
        return value[0].kind in _ATOM_KINDS or value[0].text == "..."
    return (
        all(t.kind == "name" if i % 2 == 0 else t.text == "." for i, t in enumerate(value))
        and len(value) % 2 == 1
    )


def _pairs(tokens: list[_Token]) -> dict[int, int]:
    """closer index -> opener index."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if token.text in _OPENERS:
            stack.append(index)
        elif token.text in _CLOSERS:
            pairs[index] = stack.pop()
    return pairs


def _exploded_ok(
    tokens: list[_Token], pairs: dict[int, int], opener: int, closer: int, indent: int
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


def _union_ok(tokens: list[_Token], start: int, end: int, indent: int) -> bool:
    """An element `a | b | ...` too long for its row, split before each `|` (black's delimiter
    split at the element's strongest delimiter; its operands each on one row)."""
    depth, width = 0, indent
    for index in range(start, end + (tokens[end].text == ",")):
        token = tokens[index]
        if token.text in _OPENERS:
            depth += 1
        elif token.text in _CLOSERS:
            depth -= 1
        at_top = depth == 0 and token.text == "|"
        if index > start and token.starts_row != at_top:
            return False
        if at_top and len(token.space) != indent:
            return False
        width += str_width(token.text) + (1 if at_top else len(token.space) if index > start else 0)
    return width > LINE_LENGTH


def _elements(
    tokens: list[_Token], pairs: dict[int, int], start: int, end: int
) -> list[tuple[int, int]]:
    """The comma-separated elements between start and end (a bracket's inside), as index spans."""
    spans: list[tuple[int, int]] = []
    depth, begin = 0, start
    for index in range(start, end):
        text = tokens[index].text
        if text in _OPENERS:
            depth += 1
        elif text in _CLOSERS:
            depth -= 1
        elif text == "," and depth == 0:
            spans.append((begin, index))
            begin = index + 1
    if begin < end:
        spans.append((begin, end))
    return spans
