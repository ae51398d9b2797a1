"""Structural shape detection: which JSON Schema patterns are enums, tagged unions or structs.

Owns the rules that recognise ACP's conventions from structure alone (no name lists):
- an open enum is an `anyOf`/`oneOf` of string `const`s plus one bare `{"type": "string"}`;
- a closed enum is `enum: [...]` or only string `const`s;
- a tagged union is an `anyOf`/`oneOf` of objects that all carry one property (the tag) as a
  string `const`, except at most one "Custom or future" fallback where the tag is a bare string
  and at most one variant where the tag is `null` or absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DOC_KEYS = frozenset({"description", "title", "x-docs-ignore", "$comment", "examples"})


def options_of(schema: dict[str, Any]) -> list[Any] | None:
    """The alternatives of an `anyOf`/`oneOf` schema, if it has exactly one of those."""
    has_any, has_one = "anyOf" in schema, "oneOf" in schema
    if has_any == has_one:
        return None
    opts = schema["anyOf" if has_any else "oneOf"]
    return opts if isinstance(opts, list) else None


def is_null_schema(schema: Any) -> bool:
    """`{"type": "null"}` (with only documentation beside it)."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "null"
        and set(schema) - DOC_KEYS == {"type"}
    )


def _string_const(schema: Any) -> str | None:
    if (
        isinstance(schema, dict)
        and isinstance(schema.get("const"), str)
        and schema.get("type", "string") == "string"
    ):
        return str(schema["const"])
    return None


def _bare_string(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and "const" not in schema
        and "enum" not in schema
    )


@dataclass(frozen=True)
class EnumShape:
    """Known values (value, description) of a string enum and whether it is open."""

    values: tuple[tuple[str, str | None], ...]
    open: bool
    fallback_description: str | None = None


def enum_shape(schema: dict[str, Any]) -> EnumShape | None:
    """Recognise a string enum, open or closed."""
    if isinstance(schema.get("enum"), list) and schema.get("type", "string") == "string":
        if schema["enum"] and all(isinstance(v, str) for v in schema["enum"]):
            return EnumShape(tuple((v, None) for v in schema["enum"]), open=False)
        return None
    opts = options_of(schema)
    if not opts:
        return None
    values: list[tuple[str, str | None]] = []
    fallback: list[Any] = []
    for opt in opts:
        const = _string_const(opt)
        if const is not None and set(opt) - DOC_KEYS <= {"type", "const"}:
            values.append((const, opt.get("description")))
        elif _bare_string(opt) and set(opt) - DOC_KEYS <= {"type", "not"}:
            fallback.append(opt)
        else:
            return None
    if not values or len(fallback) > 1:
        return None
    return EnumShape(
        tuple(values),
        open=bool(fallback),
        fallback_description=fallback[0].get("description") if fallback else None,
    )


@dataclass(frozen=True)
class UnionShape:
    """A tagged union: its tag property, known variants, fallback and null-tag variant."""

    tag: str
    known: tuple[tuple[str, dict[str, Any]], ...]  # (tag value, variant schema)
    fallback: dict[str, Any] | None
    none: dict[str, Any] | None


def _props(option: dict[str, Any]) -> dict[str, Any]:
    props = option.get("properties")
    return props if isinstance(props, dict) else {}


def union_shape(schema: dict[str, Any]) -> UnionShape | None:
    """Recognise a tagged union by finding the one property every variant pins."""
    opts = options_of(schema)
    if not opts or not all(isinstance(o, dict) for o in opts):
        return None
    candidates: set[str] | None = None
    for opt in opts:
        consts = {k for k, v in _props(opt).items() if _string_const(v) is not None}
        if consts:
            candidates = consts if candidates is None else candidates & consts
    if not candidates:
        return None
    for tag in sorted(candidates):
        shape = _union_with_tag(opts, tag)
        if shape is not None:
            return shape
    return None


def _union_with_tag(opts: list[dict[str, Any]], tag: str) -> UnionShape | None:
    known: list[tuple[str, dict[str, Any]]] = []
    fallback: list[dict[str, Any]] = []
    none: list[dict[str, Any]] = []
    for opt in opts:
        prop = _props(opt).get(tag)
        const = _string_const(prop)
        if const is not None:
            known.append((const, opt))
        elif _bare_string(prop):
            fallback.append(opt)
        elif prop is None or is_null_schema(prop):
            if "$ref" in opt or options_of(opt) is not None:
                return None
            none.append(opt)
        else:
            return None
    values = [k for k, _ in known]
    if not known or len(fallback) > 1 or len(none) > 1 or len(set(values)) != len(values):
        return None
    return UnionShape(
        tag, tuple(known), fallback[0] if fallback else None, none[0] if none else None
    )
