"""black's layout for the long lines the package templates write: signatures and calls.

black formats a piece a second time whenever its first pass changed something. The templates
write each `def` and each call on one line; where such a line is too long, `black_line` lays it
out as black does, so that black's first pass finds nothing to change:

- a `def`: black's left-hand split at its parameters: all of them on one row of their own
  (a lone parameter gets a trailing comma), or one a row, each with its comma;
- a statement ending in a call: black's right-hand split at the call's brackets: the arguments
  on one row, or a lone argument laid out the same way one level in, or one argument a row, each
  with its comma (an argument ending in a call that does not fit split again).

This is a speed-up only: black still formats every piece, so a line laid out other than black
would lay it out costs black's second pass, never the layout. Anything else (a line with a
comment, a string with a bracket or quote escaped in it, a non-ASCII character, a bracket that
is not a call, a head or tail too long) is returned on one row, as written.
"""

from __future__ import annotations

from acp_codegen.fmt import LINE_LENGTH

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


def black_line(line: str, indent: int) -> str:
    """`line` (one logical line without its indentation) indented by `indent` spaces, its rows
    as black lays them out where this module knows how, else as written."""
    rows = None
    if line.isascii() and "\n" not in line and "#" not in line and "\\" not in line:
        rows = _rows(line.strip(), indent)
    return "\n".join(rows) if rows else " " * indent + line


def _rows(line: str, indent: int) -> list[str] | None:
    if _fits(line, indent):
        return [" " * indent + line]
    if line.startswith(("def ", "async def ")):
        return _def_rows(line, indent)
    flat = _flat(line)
    if flat is None:
        return None
    target, equals, value = flat.partition(" = ")
    if equals and any(word in value for word in (" if ", " else ", " and ", " or ", " | ")):
        return _value_rows(line[: len(target)], line[len(target) + 3 :], indent)
    return _call_rows(line, indent, "")


def _fits(text: str, indent: int) -> bool:
    return indent + len(text) <= LINE_LENGTH


def _def_rows(line: str, indent: int) -> list[str] | None:
    """black's left-hand split of a `def` at its parameters."""
    opener = line.find("(")
    closer = _closer(line, opener) if opener > 0 else None
    if closer is None:
        return None
    head, body, tail = line[: opener + 1], line[opener + 1 : closer].strip(), line[closer:]
    elements = _elements(body)
    if not elements or not _fits(head, indent) or not _fits(tail, indent):
        return None
    if len(elements) == 1:
        inner = [elements[0] + ","]  # black adds a comma to a lone parameter it splits off
    elif not body.endswith(",") and _fits(body, indent + 4):
        inner = [body]
    else:
        inner = [element + "," for element in elements]
    pad = " " * indent
    rows = [pad + head]
    for row in inner:
        split = [pad + "    " + row] if _fits(row, indent + 4) else _parameter_rows(row, indent + 4)
        if split is None:
            return None
        rows.extend(split)
    return [*rows, pad + tail]


def _parameter_rows(parameter: str, indent: int) -> list[str] | None:
    """A parameter too long for its row, `name: A | B [= default],`: black parenthesizes the
    annotation and splits it before each `|`."""
    name, colon, rest = parameter.partition(": ")
    annotation, equals, default = rest.removesuffix(",").partition(" = ")
    if not colon or not name.isidentifier() or not parameter.endswith(","):
        return None
    closing = f") = {default}," if equals else "),"
    inner = _operand_rows(annotation, indent + 4)
    if inner is None or not _fits(name + ": (", indent) or not _fits(closing, indent):
        return None
    pad = " " * indent
    return [pad + name + ": (", *inner, pad + closing]


def _value_rows(target: str, value: str, indent: int) -> list[str] | None:
    """`target = value` too long for its row, the value an expression with operators (a union,
    a conditional): black parenthesizes the value, on a row of its own when it fits there, else
    (a union) split before each `|`."""
    if not _fits(target + " = (", indent):
        return None
    if _fits(value, indent + 4):
        inner: list[str] | None = [" " * (indent + 4) + value]
    else:
        inner = _operand_rows(value, indent + 4)
    if inner is None:
        return None
    pad = " " * indent
    return [pad + target + " = (", *inner, pad + ")"]


def _flat(line: str) -> str | None:
    """`line` with what is inside brackets and strings replaced by `_` (same length), so that a
    search finds only what is at its top level; None for a string this module does not read."""
    chars = _outside_strings(line)
    if chars is None:
        return None
    out = ["_"] * len(line)
    depth = 0
    for index, char in chars:
        if char in _CLOSERS:
            depth -= 1
        if not depth:
            out[index] = char
        if char in _OPENERS:
            depth += 1
    return "".join(out)


def _operand_rows(union: str, indent: int) -> list[str] | None:
    """`union` (`A | B | ...`) at `indent`: on one row when it fits, else one operand a row after
    the first, each but the first after `| ` (a subscript too long exploded one element a row)."""
    operands = _elements(union, "|")
    if operands is None or len(operands) < 2:
        return None
    pad = " " * indent
    if _fits(union, indent):
        return [pad + union]
    rows: list[str] = []
    for index, operand in enumerate(operands):
        text = operand if index == 0 else "| " + operand
        if _fits(text, indent):
            rows.append(pad + text)
            continue
        split = _subscript_rows(text, indent)
        if split is None:
            return None
        rows.extend(split)
    return rows


def _subscript_rows(text: str, indent: int) -> list[str] | None:
    """`[| ]Name[a, b, ...]` too long for its row: one element a row, each with its comma."""
    opener = text.find("[")
    if opener < 1 or not text.endswith("]") or _closer(text, opener) != len(text) - 1:
        return None
    elements = _elements(text[opener + 1 : -1])
    if not elements or len(elements) < 2 or not _fits(text[: opener + 1], indent):
        return None
    pad, inner_pad = " " * indent, " " * (indent + 4)
    if not all(_fits(element + ",", indent + 4) for element in elements):
        return None
    return [pad + text[: opener + 1], *(inner_pad + element + "," for element in elements), pad + "]"]


def _call_rows(line: str, indent: int, suffix: str, *, nested: bool = False) -> list[str] | None:
    """black's right-hand split of `line + suffix`, which ends in a call's closing bracket (or,
    `nested` in another split, a list, dict or tuple display's: black explodes those whole)."""
    if not line.endswith((")", "]", "}")):
        return None
    opener = _opener_of_last(line)
    if opener is None:
        return None
    call = line[opener] == "(" and opener > 0 and (line[opener - 1].isalnum() or line[opener - 1] in "_)]")
    display = opener == 0 and nested
    if not call and not display:
        return None  # a subscript, or a bracket black may add or drop parentheses around
    head, body = line[: opener + 1], line[opener + 1 : -1].strip()
    elements = _elements(body)
    if not elements or not _fits(head, indent):
        return None
    pad, inner_pad = " " * indent, " " * (indent + 4)
    tail = pad + line[-1] + suffix
    magic = body.endswith(",") or display
    if not magic and _fits(body, indent + 4):
        return [pad + head, inner_pad + body, tail]
    if len(elements) == 1 and not magic:
        inner = _call_rows(body, indent + 4, "", nested=True)
        return None if inner is None else [pad + head, *inner, tail]
    rows = [pad + head]
    for element in elements:
        if _fits(element + ",", indent + 4):
            rows.append(inner_pad + element + ",")
            continue
        split = _call_rows(element, indent + 4, ",", nested=True)
        if split is None:
            return None
        rows.extend(split)
    return [*rows, tail]


def _outside_strings(line: str) -> list[tuple[int, str]] | None:
    """Each character of `line` outside its string literals, with its position; None for a
    string this module does not read (an unclosed quote)."""
    out: list[tuple[int, str]] = []
    index = 0
    while index < len(line):
        char = line[index]
        if char in "\"'":
            end = line.find(char, index + 1)
            if end < 0:
                return None
            index = end + 1
            continue
        out.append((index, char))
        index += 1
    return out


def _scan(line: str) -> list[tuple[int, str]] | None:
    """The brackets, commas and `|`s of `line` outside its strings, as (position, character)."""
    chars = _outside_strings(line)
    return None if chars is None else [(i, c) for i, c in chars if c in _OPENERS or c in _CLOSERS or c in ",|"]


def _closer(line: str, opener: int) -> int | None:
    """The position of the bracket that closes `line[opener]`."""
    depth = 0
    for index, char in _scan(line) or []:
        if index < opener or char in ",|":
            continue
        depth += 1 if char in _OPENERS else -1
        if depth == 0:
            return index
    return None


def _opener_of_last(line: str) -> int | None:
    """The position of the bracket that the last character of `line` closes."""
    stack: list[int] = []
    for index, char in _scan(line) or []:
        if char in _OPENERS:
            stack.append(index)
        elif char in _CLOSERS:
            if not stack:
                return None
            opener = stack.pop()
            if index == len(line) - 1:
                return opener
    return None


def _elements(body: str, separator: str = ",") -> list[str] | None:
    """`body` cut at its top-level `separator`s (a trailing one leaves no empty element)."""
    scanned = _scan(body)
    if scanned is None:
        return None
    elements: list[str] = []
    depth, start = 0, 0
    for index, char in scanned:
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        elif depth == 0 and char == separator:
            elements.append(body[start:index].strip())
            start = index + 1
    last = body[start:].strip()
    if last:
        elements.append(last)
    return elements if all(elements) else None
