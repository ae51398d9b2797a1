r"""JSON Schema `pattern`s (ECMA-262 regular expressions) as regular expressions the generated
models can run, and the engine each needs.

pydantic matches a string `pattern` with Rust's `regex` crate, which has no lookaround and no
backreferences; given a compiled `re.Pattern` it uses Python's `re`. A pattern is translated
once, here: the classes ECMA-262 defines as ASCII (`\d`, `\w`; both engines read them as
Unicode) are spelled out, `.` excludes the ECMA line terminators, named groups use Python's
spelling, and `$` (end of input in ECMA-262 without the `m` flag) becomes `\Z` for Python, whose
`$` also matches before a final newline. Rust is kept where it can run the pattern (it is linear
time); Python's `re` is used where the pattern needs it. A pattern neither reads is invalid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Engine = Literal["rust-regex", "python-re"]

_ASCII_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]", "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]"}
_ASCII_INSIDE = {"d": "0-9", "w": "0-9A-Za-z_"}
_DOT = "[^\\n\\r\\u2028\\u2029]"
_NAMED_BACKREF = re.compile(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>")


@dataclass(frozen=True)
class Regex:
    """A schema pattern as the generated model runs it: the translated text and its engine."""

    text: str
    engine: Engine


class BadPattern(ValueError):
    """The pattern is not a regular expression either engine can run."""


def translate(pattern: str) -> Regex:
    """The `Regex` for an ECMA-262 pattern; `BadPattern` when it is invalid."""
    needs_python = False
    out: list[str] = []
    python_out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            named = _NAMED_BACKREF.match(pattern, i)
            if named is not None and not in_class:
                needs_python = True
                _emit(out, python_out, f"(?P={named[1]})")
                i = named.end()
                continue
            if nxt.isdigit() and nxt != "0" and not in_class:
                needs_python = True
            table = _ASCII_INSIDE if in_class else _ASCII_OUTSIDE
            _emit(out, python_out, table.get(nxt, "/" if nxt == "/" else char + nxt))
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
            _emit(out, python_out, char)
        elif char == "[":
            if pattern.startswith("[^]", i):
                _emit(out, python_out, "[\\s\\S]")
                i += 3
                continue
            if pattern.startswith("[]", i):
                _emit(out, python_out, "(?!)")
                needs_python = True
                i += 2
                continue
            in_class = True
            _emit(out, python_out, char)
        elif char == "(" and pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            needs_python = True
            _emit(out, python_out, char)
        elif char == "(" and pattern.startswith("(?<", i):
            _emit(out, python_out, "(?P<")
            i += 3
            continue
        elif char == ".":
            _emit(out, python_out, _DOT)
        elif char == "$":
            out.append("$")
            python_out.append("\\Z")
        else:
            _emit(out, python_out, char)
        i += 1
    python_text = "".join(python_out)
    try:
        re.compile(python_text)
    except re.error as exc:
        raise BadPattern(f"invalid regular expression: {exc.msg} at position {exc.pos}") from None
    rust_text = "".join(out)
    if not needs_python and _rust_accepts(rust_text):
        return Regex(rust_text, "rust-regex")
    return Regex(python_text, "python-re")


def _emit(out: list[str], python_out: list[str], text: str) -> None:
    out.append(text)
    python_out.append(text)


def _rust_accepts(text: str) -> bool:
    """Whether pydantic's Rust engine compiles the pattern (the one the models would use)."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        SchemaValidator(core_schema.str_schema(pattern=text))
    except SchemaError:
        return False
    return True
