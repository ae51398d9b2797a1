"""Loading a fetched schema: bytes -> parsed JSON document, with `invalid-json` / `not-acp` errors.

Also owns `parse_json`, the JSON reader every command uses for input: it refuses what Python
cannot hold or print as read (integers longer than Python's digit limit, numbers out of the
double range, `NaN`/`Infinity`, strings with lone surrogates) with the JSON pointer of the
value, instead of a ValueError deep in a later stage.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_codegen.errors import CodegenError, Diagnostic, fail, pointer_join
from acp_codegen.sources import Fetched, default_cache_dir, default_shared_dir, fetch, parse_source


@dataclass(frozen=True)
class LoadedSchema:
    """A parsed schema document with the raw bytes it came from and their provenance."""

    document: dict[str, Any]
    raw: bytes
    sha256: str
    source: str
    label: str


def load_document(fetched: Fetched) -> LoadedSchema:
    """Parse fetched bytes as a JSON object (UTF-8); report where it is broken."""
    data = fetched.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise fail(
            "invalid-json",
            f"invalid UTF-8 at line {line}, column {column} " f"(byte {exc.start})",
            file=fetched.label,
        ) from None
    try:
        document = parse_json(text)
    except UnrepresentableJson as exc:
        raise CodegenError(
            *(
                Diagnostic("error", code, message, fetched.label, pointer)
                for code, message, pointer in exc.problems
            )
        ) from None
    except json.JSONDecodeError as exc:
        raise fail(
            "invalid-json",
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: " f"{exc.msg}",
            file=fetched.label,
        ) from None
    except RecursionError:
        raise fail("invalid-json", "JSON nested too deeply", file=fetched.label) from None
    if not isinstance(document, dict):
        raise fail(
            "not-acp",
            f"expected a JSON Schema object at the top level, found " f"{_json_type(document)}",
            file=fetched.label,
            pointer="",
        )
    return LoadedSchema(document, data, fetched.sha256, fetched.source, fetched.label)


def load_source(
    text: str,
    *,
    expected_sha256: str | None = None,
    cache_dir: Path | None = None,
    shared_dir: Path | None = None,
    offline: bool = False,
) -> LoadedSchema:
    """Parse a source spec, fetch it (default cache and shared directories) and load it."""
    fetched = fetch(
        parse_source(text),
        expected_sha256=expected_sha256,
        cache_dir=cache_dir if cache_dir is not None else default_cache_dir(),
        shared_dir=shared_dir if shared_dir is not None else default_shared_dir(),
        offline=offline,
    )
    return load_document(fetched)


class UnrepresentableJson(ValueError):
    """Valid JSON text holding values Python cannot represent faithfully: (code, message,
    pointer)s."""

    def __init__(self, problems: list[tuple[str, str, str]]) -> None:
        super().__init__(
            "; ".join(f"{message} at {pointer or '/'}" for _, message, pointer in problems)
        )
        self.problems = problems


@dataclass(frozen=True)
class _Unrepresentable:
    """Stands in for a number Python cannot hold until the walk finds its pointer."""

    message: str


_MAX_REPORTED = 10  # problems listed per document; the rest are counted
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _parse_int(text: str) -> int | _Unrepresentable:
    limit = sys.get_int_max_str_digits()
    digits = len(text) - text.startswith("-")
    if limit and digits > limit:
        return _Unrepresentable(
            f"integer literal with {digits} digits is longer than Python's "
            f"limit of {limit} digits"
        )
    return int(text)


def _parse_float(text: str) -> float | _Unrepresentable:
    value = float(text)
    if math.isfinite(value):
        return value
    shown = text if len(text) <= 24 else text[:20] + "..."
    return _Unrepresentable(f"number {shown} is out of range (not a finite double)")


def _parse_constant(name: str) -> _Unrepresentable:
    return _Unrepresentable(f"{name} is not a JSON number")


def parse_json(text: str) -> Any:
    """`json.loads`, refusing what Python cannot hold as read (see the module docstring).

    Raises `json.JSONDecodeError` for broken JSON and `UnrepresentableJson` (a ValueError)
    listing each bad value with its JSON pointer.
    """
    odd: list[_Unrepresentable] = []

    def number(parse: Any) -> Any:
        def hook(value: str) -> Any:
            out = parse(value)
            if isinstance(out, _Unrepresentable):
                odd.append(out)
            return out

        return hook

    document = json.loads(
        text,
        parse_int=number(_parse_int),
        parse_float=number(_parse_float),
        parse_constant=number(_parse_constant),
    )
    if odd or _SURROGATE_ESCAPE.search(text):
        problems = _problems(document)
        if problems:
            raise UnrepresentableJson(problems)
    return document


def _problems(document: Any) -> list[tuple[str, str, str]]:
    """(code, message, pointer) of every unrepresentable value, in document order (iterative:
    the document may be as deep as the parser allows)."""
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[str, Any]] = [("", document)]
    total = 0
    while stack:
        pointer, value = stack.pop()
        problem: tuple[str, str] | None = None
        if isinstance(value, _Unrepresentable):
            problem = ("bad-number", value.message)
        elif isinstance(value, str) and not _is_unicode(value):
            problem = (
                "bad-string",
                f"string {_shown(value)} holds a lone surrogate (not Unicode text)",
            )
        elif isinstance(value, dict):
            for key in value:
                if not _is_unicode(key):
                    problem = (
                        "bad-string",
                        f"property name {_shown(key)} holds a lone surrogate (not Unicode text)",
                    )
            children = [
                (pointer_join(pointer, _shown(k, quote=False)), v) for k, v in value.items()
            ]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed([(pointer_join(pointer, i), v) for i, v in enumerate(value)]))
        if problem is not None:
            total += 1
            if len(found) < _MAX_REPORTED:
                found.append((*problem, pointer))
    if total > len(found):
        code, message, pointer = found[-1]
        found[-1] = (code, f"{message} (and {total - len(found)} more such values)", pointer)
    return found


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str, *, quote: bool = True) -> str:
    r"""Printable form of a string that may hold lone surrogates (escaped as `\udXXX`)."""
    escaped = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(escaped) > 40:
        escaped = escaped[:37] + "..."
    return f'"{escaped}"' if quote else escaped


def _json_type(value: object) -> str:
    """The JSON name of a parsed value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"
