"""Docstring literals: a description as a triple-quoted string a person would write.

Owns escaping (backslashes, triple quotes, characters a source file cannot hold) and layout:
continuation lines indented under the statement they document (as black lays out a class's or
function's docstring, and as a person writes an attribute's), the closing quotes on a line of
their own when they would not fit. The value of a class's or function's docstring is its
description (`inspect.cleandoc`, which `__doc__` readers apply, removes the indentation).
"""

from __future__ import annotations

import re

from acp_codegen.fmt import LINE_LENGTH

# Characters a docstring cannot hold as they are: NUL (a SyntaxError), other C0 controls, DEL, and
# what `str.splitlines` takes for a line break besides `\n` (a literal `\r` would be read back as
# `\n`). Escaped, the docstring's value is the description.
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


def escaped(text: str | None) -> str:
    """A description as the inside of a triple-quoted literal (its value is the description)."""
    body = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return _UNWRITABLE.sub(_escaped_char, body)


def docstring(text: str | None, indent: int | None = None) -> str:
    """A triple-quoted literal for a description; with `indent` (the column of the statement it
    documents), continuation lines are indented to it."""
    body = escaped(text)
    if indent is not None and "\n" in body and not re.search(r"\\\s*\n", body):  # black skips those
        body = _reindented(body, " " * indent)
    if body.startswith('"'):
        body = " " + body
    if body.endswith('"'):
        body += " "
    lines = body.splitlines()
    if indent is not None and len(lines) > 1 and len(lines[-1]) + 3 > LINE_LENGTH:
        return f'"""{body}\n{" " * indent}"""'
    return f'"""{body}"""'


def _escaped_char(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _reindented(body: str, prefix: str) -> str:
    """Continuation lines lose their common indentation and get `prefix` (black's
    `fix_multiline_docstring`); blank lines become empty; trailing spaces go."""
    lines = [_leading_tabs_expanded(line) for line in body.splitlines()]
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    rest = [(prefix + line[margin:].rstrip()) if line.strip() else "" for line in lines[1:]]
    return "\n".join([lines[0].strip(), *rest])


def _leading_tabs_expanded(line: str) -> str:
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)].expandtabs() + stripped if stripped else line
