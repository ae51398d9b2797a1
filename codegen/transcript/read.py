"""Reading a transcript: JSON lines of `{"from": "client" | "agent", "message": {...}}`.

Owns the file format (docs/transcript.md). Blank lines are skipped; anything else that is not
such an object makes the whole file unreadable (a `CodegenError`, exit status 2), since a
checker that skipped lines would report on a different conversation than the one recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from codegen.errors import fail
from codegen.load import UnrepresentableJson, parse_json

Sender = Literal["client", "agent"]


@dataclass(frozen=True)
class Entry:
    """One recorded JSON-RPC message: its 1-based line number, who sent it, and the message."""

    line: int
    sender: Sender
    message: dict[str, Any]


def read_transcript(path: Path) -> list[Entry]:
    """Read and parse a transcript file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail("transcript-unreadable", "no such file", file=str(path)) from None
    except IsADirectoryError:
        raise fail("transcript-unreadable", "is a directory, not a transcript file", file=str(path)) from None
    except UnicodeDecodeError as error:
        raise fail("transcript-unreadable", f"not UTF-8 text ({error.reason} at byte {error.start})", file=str(path)) from None
    except OSError as error:
        raise fail("transcript-unreadable", error.strerror or str(error), file=str(path)) from None
    return parse_transcript(text, str(path))


def parse_transcript(text: str, name: str = "<transcript>") -> list[Entry]:
    """Parse transcript text; `name` is used in error messages."""
    entries: list[Entry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = parse_json(line)
        except json.JSONDecodeError as error:
            raise fail("transcript-line", f"line {number}: not JSON ({error.msg} at column {error.colno})", file=name) from None
        except UnrepresentableJson as error:
            raise fail("transcript-line", f"line {number}: {error}", file=name) from None
        if not isinstance(item, dict):
            raise fail("transcript-line", f"line {number}: expected an object with `from` and `message`", file=name)
        sender, message = item.get("from"), item.get("message")
        if sender not in ("client", "agent"):
            raise fail("transcript-line", f'line {number}: `from` must be "client" or "agent", got {json.dumps(sender)}', file=name)
        if not isinstance(message, dict):
            raise fail("transcript-line", f"line {number}: `message` must be one JSON-RPC message (an object)", file=name)
        entries.append(Entry(number, sender, message))
    return entries
