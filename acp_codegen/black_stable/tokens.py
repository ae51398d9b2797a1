"""The lexing of `acp_codegen.black_stable`: a piece as logical lines of the tokens it knows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# One token and the spaces before it (a piece is a run of these, nothing in between).
_TOKEN = re.compile(
    r"""(?P<sp>\ *)(?:(?P<nl>\n)|(?P<comment>\#[^\n]*)
    |(?P<str3>\"\"\"(?:[^"\\]|"(?!""))*\"\"\")|(?P<str>"[^"\\\n]*")
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?![0-9A-Za-z_.]))
    |(?P<op>->|\*\*|\.\.\.|[()\[\]{}:,.=|@*-]))""",
    re.VERBOSE,
)
# Characters black treats specially anywhere (tabs, other line breaks, form feeds, escapes).
NEVER = re.compile(r"[\t\r\f\v\x00-\x08\x0e-\x1f\x7f\\\x85\u2028\u2029]")
# A comment black leaves as written: `#` then a space and text, nothing black reads in it.
_COMMENT = re.compile(r"#(?: (?!.*(?:fmt:|fmt :|yapf:|type:))[^\s\xa0].*(?<=\S))?")
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = frozenset(OPENERS.values())


@dataclass(slots=True)
class Token:
    kind: str  # nl-free: name, num, str, str3, op
    text: str
    row: int  # physical line of its first character
    space: str  # the whitespace before it on its line ("" at a line start)
    starts_row: bool


@dataclass(slots=True)
class Line:
    """One logical line: its tokens and the blank lines before it."""

    indent: int
    blanks: int
    tokens: list[Token] = field(default_factory=list)
    comment: str = ""  # an inline comment at its end



def logical_lines(piece: str) -> list[Line] | None:
    """The piece as logical lines, or None for a character outside the known tokens."""
    lines: list[Line] = []
    pos, row, depth, blanks, at_row_start = 0, 0, 0, 0, True
    current: Line | None = None
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
                lines.append(Line(len(space), blanks, [Token(kind, text, row, "", True)]))
                blanks = 0
            elif current is not None and not at_row_start and space == "  " and not current.comment:
                current.comment = text
            else:
                return None
            at_row_start = False
            continue
        if current is None:
            current = Line(len(space) if at_row_start else -1, blanks)
            lines.append(current)
            blanks = 0
        # a continuation row's token carries that row's indentation as its space
        current.tokens.append(
            Token(kind, text, row, space if not at_row_start or current.tokens else "", at_row_start)
        )
        if text in OPENERS:
            depth += 1
        elif text in CLOSERS:
            depth -= 1
            if depth < 0:
                return None
        if kind == "str3":
            row += text.count("\n")
        at_row_start = False
    if pos != len(piece):
        return None
    return lines if depth == 0 and current is None and blanks == 0 else None


def code_rows(lines: list[Line], rows: list[str]) -> list[str]:
    """The physical rows that hold code (the rows a multi-line string continues on excluded)."""
    inside: set[int] = set()
    for line in lines:
        for token in line.tokens:
            if token.kind == "str3":
                inside.update(range(token.row + 1, token.row + token.text.count("\n") + 1))
    return [row for index, row in enumerate(rows) if index not in inside]


def opens_block(line: Line) -> bool:
    """The line ends in `:` (a class, def or if header)."""
    return line.tokens[-1].text == ":"


def line_kind(line: Line) -> str:
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

