"""Blocks of `acp_codegen.black_stable`: indentation, blank lines and docstrings as black keeps them."""

from __future__ import annotations

from black.strings import fix_multiline_docstring

from acp_codegen.black_stable.tokens import Line, line_kind, opens_block
from acp_codegen.fmt import LINE_LENGTH


def blocks_ok(lines: list[Line]) -> bool:
    """Indentation follows the blocks, every docstring is black's, every blank-line count is one
    black keeps (`EmptyLineTracker._maybe_empty_lines`, non-stub mode, no comments)."""
    blocks: list[str] = []  # "class" | "def" of each open block
    defs: list[int] = []  # depths of the class and def lines seen (black's `previous_defs`)
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else None
        if line.indent < 0 or line.indent % 4:
            return False
        if previous is None or not opens_block(previous):
            del blocks[line.indent // 4 :]
        if line.indent != len(blocks) * 4:
            return False
        depth = len(blocks)
        closed = bool(defs) and defs[-1] >= depth
        while defs and defs[-1] >= depth:
            defs.pop()
        kind = line_kind(line)
        if kind in ("def", "class"):
            defs.append(depth)
        if kind == "comment" and not _comment_placed(lines, index):
            return False
        if line.blanks not in _blank_counts(lines, index, depth, kind, closed):
            return False
        docstring = kind == "string" and (
            _is_module_docstring(lines, index) or previous is not None and opens_block(previous)
        )
        if docstring and not _docstring_ok(line.tokens[0].text, line.indent):
            return False
        if opens_block(line):
            if (
                kind not in ("class", "def", "if")
                or (kind in ("class", "if") and depth)
                or depth > 1
            ):
                return False
            blocks.append(kind)
    return True


def _is_module_docstring(lines: list[Line], index: int) -> bool:
    """lines[index] is a string with nothing but comments before it."""
    if line_kind(lines[index]) != "string" or lines[index].indent:
        return False
    return all(line_kind(line) == "comment" for line in lines[:index])


def _comment_placed(lines: list[Line], index: int) -> bool:
    """A comment on its own row sits where black keeps it: at column 0, before a top-level
    statement (black indents a comment as the statement it precedes), not after a header or a
    decorator."""
    if index and (line_kind(lines[index - 1]) == "decorator" or opens_block(lines[index - 1])):
        return False
    return lines[index].indent == 0 and all(
        line.indent == 0 for line in lines[index + 1 : index + 2]
    )


def _blank_counts(lines: list[Line], index: int, depth: int, kind: str, closed: bool) -> range:
    """The blank-line counts before `lines[index]` that black leaves as they are."""
    if index == 0:
        return range(1)
    previous = lines[index - 1]
    previous_kind = line_kind(previous)
    most = 2 if depth == 0 else 1
    after_docstring = _is_module_docstring(lines, index - 1) or (
        previous_kind == "string" and index >= 2 and line_kind(lines[index - 2]) == "class"
    )  # black puts one blank line after a module or class docstring
    if opens_block(previous) and kind not in ("comment", "decorator", "def", "class"):
        return range(
            1
        )  # the first statement of a block (a docstring or not) right after its header
    if kind in ("decorator", "def", "class"):
        if (
            previous_kind == "decorator"
            or opens_block(previous)
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

