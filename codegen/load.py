"""Loading a fetched schema: bytes -> parsed JSON document, with `invalid-json` / `not-acp` errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.errors import fail
from codegen.sources import Fetched, default_cache_dir, default_shared_dir, fetch, parse_source


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
        raise fail("invalid-json", f"invalid UTF-8 at line {line}, column {column} "
                   f"(byte {exc.start})", file=fetched.label) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail("invalid-json", f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                   f"{exc.msg}", file=fetched.label) from None
    except RecursionError:
        raise fail("invalid-json", "JSON nested too deeply", file=fetched.label) from None
    if not isinstance(document, dict):
        raise fail("not-acp", f"expected a JSON Schema object at the top level, found "
                   f"{_json_type(document)}", file=fetched.label, pointer="")
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
