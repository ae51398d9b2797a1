r"""Reading a transcript: JSON lines of `{"from": "client" | "agent", "message": {...}}`.

Owns the file format (docs/conformance.md). The file is streamed (one line in memory at a time)
and split on `\n` only: U+2028, U+0085 and the like are ordinary characters inside JSON strings,
and the generated runtime writes them raw. Blank lines are skipped. A line that is not such an
object makes the whole file unreadable (a `CodegenError`, exit status 2), since a checker that
skipped lines would report on a different conversation than the one recorded; the exceptions
are a message too deep or holding a number too long for any reasonable reader, and a recorded
`raw` line (bytes a side sent that were not a JSON-RPC message): those are findings against the
side that sent them (`Unreadable`), not errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acp_codegen.errors import fail

Sender = Literal["client", "agent"]

MAX_DEPTH = 64  # nesting a conforming ACP message never needs; deeper is a finding, not a crash
MAX_DIGITS = 400  # digits of one JSON number; a 64-bit integer needs 20
_SENDER = re.compile(rb'^\s*\{\s*"from"\s*:\s*"(client|agent)"')


@dataclass(frozen=True)
class Entry:
    """One recorded JSON-RPC message: its 1-based line number, who sent it, and the message.

    `deliberate`: the recording side broke a rule on purpose (a probe testing its peer), so the
    rules do not report this line against it."""

    line: int
    sender: Sender
    message: dict[str, Any]
    deliberate: bool = False


@dataclass(frozen=True)
class Unreadable:
    """A recorded line that is not a usable JSON-RPC message: who sent it and why it is not."""

    line: int
    sender: Sender
    problem: str
    deliberate: bool = False


Item = Entry | Unreadable


class _TooLong(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _TooLong(f"a number of {len(text.lstrip('-'))} digits")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_DIGITS:
        raise _TooLong(f"a number of {len(text)} characters")
    return float(text)


def loads(text: str | bytes) -> Any:
    """`json.loads` with bounded numbers and nesting: `ValueError` with a short reason otherwise."""
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    if too_deep(value):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def too_deep(value: Any) -> bool:
    """Whether a parsed JSON value nests deeper than `MAX_DEPTH` (checked without recursion)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(node, dict):
            todo.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            todo.extend((v, depth + 1) for v in node)
    return False


def read_transcript(path: Path) -> Iterator[Item]:
    """Stream a transcript file's items (errors are raised when the bad line is reached)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise fail("transcript-unreadable", "no such file", file=str(path)) from None
    except IsADirectoryError:
        raise fail(
            "transcript-unreadable", "is a directory, not a transcript file", file=str(path)
        ) from None
    except OSError as error:
        raise fail("transcript-unreadable", error.strerror or str(error), file=str(path)) from None
    with handle:
        yield from parse_lines(handle, str(path))


def parse_transcript(text: str, name: str = "<transcript>") -> list[Item]:
    """Parse transcript text; `name` is used in error messages."""
    return list(parse_lines((line.encode("utf-8") for line in text.split("\n")), name))


def parse_lines(lines: Iterable[bytes], name: str) -> Iterator[Item]:
    r"""Items of raw `\n`-terminated lines (a binary file iterates exactly so)."""
    offset = 0
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise fail(
                "transcript-unreadable",
                f"not UTF-8 text ({error.reason} at byte {offset + error.start})",
                file=name,
            ) from None
        offset += len(raw)
        if line.strip():
            yield _item(number, line, raw, name)


def _item(number: int, line: str, raw: bytes, name: str) -> Item:
    try:
        item = loads(line)
    except json.JSONDecodeError as error:
        raise fail(
            "transcript-line",
            f"line {number}: not JSON ({error.msg} at column {error.colno})",
            file=name,
        ) from None
    except ValueError as error:
        sender = _SENDER.match(raw)
        if sender is None:
            raise fail(
                "transcript-line", f"line {number}: unreadable ({error})", file=name
            ) from None
        return Unreadable(number, sender.group(1).decode(), f"the message is unreadable: {error}")  # type: ignore[arg-type]
    if not isinstance(item, dict):
        raise fail(
            "transcript-line",
            f"line {number}: expected an object with `from` and `message`",
            file=name,
        )
    sender, message, deliberate = (
        item.get("from"),
        item.get("message"),
        item.get("deliberate") is True,
    )
    if sender not in ("client", "agent"):
        raise fail(
            "transcript-line",
            f'line {number}: `from` must be "client" or "agent", got {json.dumps(sender)}',
            file=name,
        )
    if isinstance(item.get("raw"), str) and "message" not in item:
        return Unreadable(
            number, sender, f"not a JSON-RPC message: {_short(item['raw'])}", deliberate
        )
    if isinstance(message, str):  # a recorder that keeps a line it could not parse as text
        return Unreadable(number, sender, f"not a JSON-RPC message: {_short(message)}", deliberate)
    if not isinstance(message, dict):
        raise fail(
            "transcript-line",
            f"line {number}: `message` must be one JSON-RPC message (an object)",
            file=name,
        )
    return Entry(number, sender, message, deliberate)


def _short(text: str) -> str:
    return json.dumps(text[:60] + ("..." if len(text) > 60 else ""))
