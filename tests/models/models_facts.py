"""What a schema file says, computed straight from its JSON, independently of the generator.

Nothing here imports `acp_codegen.ir`: these are the reference answers the generated models are
checked against (tagged unions, string enums, leniency hints), written from the JSON Schema
conventions of ACP rather than from the generator's own shape detection.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SHARED = Path("/work/shared/schemas/acp")
ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
DRAFT_STRUCTURE = Path("/work/shared/notes/draft-structure.md")

# The pinned targets: package -> schema file in the shared directory (same bytes as the pins).
PINNED = {
    "acp_v2_draft": SHARED / "npm-2.4.0" / "schema.unstable.json",
    "acp_v2": SHARED / "npm-2.4.0" / "schema.json",
    "acp_v1": SHARED / "npm-2.4.0" / "v1.schema.json",
}
HINTS = {
    "x-deserialize-default-on-error": "default_on_error",
    "x-deserialize-default-on-null": "default_on_null",
    "x-deserialize-skip-invalid-items": "skip_invalid_items",
}
_DOC = {"description", "title", "$comment", "examples", "x-docs-ignore"}


@cache
def ir(path: Path) -> Any:
    """The generator's IR of a schema file (for names and layout; the facts below never use it)."""
    from acp_codegen.pipeline import ir_for

    return ir_for(str(path))


@cache
def load(path: Path) -> dict[str, Any]:
    """A schema file, parsed (cached; never mutate the result)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def schema_files() -> list[tuple[str, Path]]:
    """(label, path) of every schema file of every shared revision (meta tables left out)."""
    manifest = load(SHARED / "manifest.json")
    out = []
    for rev in manifest["revisions"]:
        for name in rev["files"]:
            if not name.startswith("meta"):
                out.append((f"{rev['id']}/{name}", SHARED / rev["id"] / name))
    return out


def pascal(text: str) -> str:
    """`end_turn` -> `EndTurn` (the spelling ACP class names use for tag values)."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])", text) if p]
    return "".join(p[:1].upper() + p[1:].lower() for p in parts)


def snake(text: str) -> str:
    """`sessionId` -> `session_id`, `_meta` -> `meta`."""
    parts = [
        p
        for p in re.split(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", text)
        if p
    ]
    return "_".join(p.lower() for p in parts)


def resolve(doc: dict[str, Any], schema: Any) -> Any:
    """Follow a local `$ref` (one level)."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return doc["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _is_string_const(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and isinstance(schema.get("const"), str)
        and schema.get("type", "string") == "string"
    )


def _is_plain_string(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and "const" not in schema
        and "enum" not in schema
    )


def _alternatives(schema: dict[str, Any]) -> list[Any] | None:
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and not (set(schema) & ({"anyOf", "oneOf"} - {key})):
            return list(schema[key])
    return None


@dataclass(frozen=True)
class UnionFact:
    """A tagged union as the schema states it."""

    name: str
    tag: str
    tags: tuple[str, ...]  # known tag values in schema order
    open: bool  # has a "Custom or future" variant whose tag is any other string
    has_none: bool  # has a variant whose tag is absent or null


@dataclass(frozen=True)
class EnumFact:
    """A string enum as the schema states it."""

    name: str
    values: tuple[str, ...]
    open: bool


def union_fact(name: str, schema: dict[str, Any]) -> UnionFact | None:
    """`anyOf`/`oneOf` of objects sharing one property that is a string `const` in each known
    variant; at most one variant with that property a plain string (open), at most one without it
    or with it `null`."""
    options = _alternatives(schema)
    if not options or not all(isinstance(o, dict) for o in options):
        return None
    props = [o.get("properties") if isinstance(o.get("properties"), dict) else {} for o in options]
    candidates = {k for p in props for k, v in p.items() if _is_string_const(v)}
    for tag in sorted(candidates):
        known: list[str] = []
        fallback = none = 0
        ok = True
        for p in props:
            prop = p.get(tag)
            if _is_string_const(prop):
                known.append(prop["const"])
            elif _is_plain_string(prop):
                fallback += 1
            elif prop is None or (isinstance(prop, dict) and prop.get("type") == "null"):
                none += 1
            else:
                ok = False
        if ok and known and fallback <= 1 and none <= 1 and len(set(known)) == len(known):
            return UnionFact(name, tag, tuple(known), fallback == 1, none == 1)
    return None


def enum_fact(name: str, schema: dict[str, Any]) -> EnumFact | None:
    """`enum` of strings (closed), or `anyOf`/`oneOf` of string `const`s (closed) plus at most one
    plain string (open)."""
    if isinstance(schema.get("enum"), list):
        values = schema["enum"]
        if values and all(isinstance(v, str) for v in values):
            return EnumFact(name, tuple(values), False)
        return None
    options = _alternatives(schema)
    if not options:
        return None
    values, plain = [], 0
    for o in options:
        if _is_string_const(o) and not (set(o) - _DOC - {"type", "const"}):
            values.append(o["const"])
        elif _is_plain_string(o):
            plain += 1
        else:
            return None
    if not values or plain > 1:
        return None
    return EnumFact(name, tuple(values), plain == 1)


def unions(doc: dict[str, Any]) -> dict[str, UnionFact]:
    """Every `$defs` entry that is a tagged union."""
    out = {}
    for name, schema in doc["$defs"].items():
        if isinstance(schema, dict) and enum_fact(name, schema) is None:
            fact = union_fact(name, schema)
            if fact is not None:
                out[name] = fact
    return out


def enums(doc: dict[str, Any]) -> dict[str, EnumFact]:
    """Every `$defs` entry that is a string enum."""
    out = {}
    for name, schema in doc["$defs"].items():
        if isinstance(schema, dict):
            fact = enum_fact(name, schema)
            if fact is not None:
                out[name] = fact
    return out


def parse_draft_structure(
    text: str,
) -> tuple[dict[str, UnionFact], dict[str, EnumFact], dict[str, EnumFact]]:
    """The tagged unions, open enums and closed enums listed in draft-structure.md."""
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    found_unions: dict[str, UnionFact] = {}
    open_enums: dict[str, EnumFact] = {}
    closed_enums: dict[str, EnumFact] = {}
    for section in sections:
        title = section.splitlines()[0] if section else ""
        for line in section.splitlines()[1:]:
            if not line.startswith("- `"):
                continue
            ticks = re.findall(r"`([^`]*)`", line)
            if title.startswith("Tagged unions"):
                m = re.match(r"- `(\w+)` by `(\w+)` \((open|closed)\): (.*)$", line)
                assert m, line
                values = tuple(re.findall(r"`([^`]*)`", m.group(4)))
                found_unions[m.group(1)] = UnionFact(
                    m.group(1), m.group(2), values, m.group(3) == "open", False
                )
            elif title.startswith("Open string enums"):
                open_enums[ticks[0]] = EnumFact(ticks[0], tuple(ticks[1:]), True)
            elif title.startswith("Closed enums"):
                closed_enums[ticks[0]] = EnumFact(ticks[0], tuple(ticks[1:]), False)
    return found_unions, open_enums, closed_enums


def hint_sites(doc: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """hint name -> [($defs key, property)] for every property carrying an `x-deserialize-*` hint
    (in the definition itself, its `allOf` parts and its union variants)."""
    out: dict[str, list[tuple[str, str]]] = {v: [] for v in HINTS.values()}

    def visit(key: str, schema: Any) -> None:
        if not isinstance(schema, dict):
            return
        for prop, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict):
                for hint, name in HINTS.items():
                    if sub.get(hint):
                        out[name].append((key, prop))
        for k in ("allOf", "anyOf", "oneOf"):
            for part in schema.get(k) or ():
                if isinstance(part, dict) and "$ref" not in part:
                    visit(key, part)

    for key, schema in doc["$defs"].items():
        visit(key, schema)
    return out
