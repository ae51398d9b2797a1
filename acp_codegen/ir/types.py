"""Type expressions: turns a property's JSON Schema into a `TypeExpr`, hoisting inline objects.

Owns the mapping of JSON Schema keywords (`type`, `$ref`, `allOf`, `anyOf`/`oneOf`, `const`,
`enum`, `items`, `additionalProperties`, numeric and string constraints) to IR type nodes.
Inline objects and inline tagged unions are hoisted into named definitions by the builder
(`Hoister.hoist`), named after their owner and property so the name never depends on position.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from acp_codegen.errors import fail
from acp_codegen.ir.naming import pascal
from acp_codegen.ir.nodes import ArrayOf, Const, MapOf, Ref, Scalar, TypeExpr, UnionOf
from acp_codegen.ir.patterns import BadPattern, Regex, translate
from acp_codegen.ir.shapes import DOC_KEYS, enum_shape, options_of, union_shape
from acp_codegen.resolve import ref_name

_STRING_CONSTRAINTS = ("minLength", "maxLength", "pattern")
_NUMBER_CONSTRAINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ARRAY_CONSTRAINTS = ("minItems", "maxItems", "uniqueItems")
# Arrays, maps and unions nested inline in one annotation before the inner ones become a named
# alias (`<Owner>Level<N>`): Python's parser refuses more than 200 nested brackets.
MAX_NESTED_ARRAYS = 16
# Options of one union other than literals (which share one flat `Literal[...]`, any number):
# each is a `|` operand, and Python's compiler recurses once per operand (3,000 class options are
# a RecursionError at import); a bigger union is a one-line error, not a traceback.
MAX_UNION_OPTIONS = 1_000
_LEVEL_SUFFIX = re.compile(r"(?:Level[0-9]+)?(?:Item|Value)*$")
_LEVEL_MARKS = ("/items", "/additionalProperties", "/anyOf/", "/oneOf/")
_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "number",
    "boolean": "bool",
    "null": "none",
}


class Hoister(Protocol):
    """What type conversion needs from the builder."""

    @property
    def label(self) -> str:
        """The schema's file name, for diagnostics."""

    def def_ref(self, def_key: str) -> str:
        """Python name of the definition for a `$defs` key (building it if needed)."""

    def hoist(self, name: str, schema: dict[str, Any], pointer: str) -> str:
        """Build a named definition for an inline schema; return its Python name."""

    def hoist_later(self, name: str, schema: dict[str, Any], pointer: str) -> str:
        """Name an inline schema now, build it later; return its Python name."""


def _constraints(schema: dict[str, Any], keys: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, schema[k]) for k in keys if k in schema)


def union(options: list[TypeExpr]) -> TypeExpr:
    """Flatten and de-duplicate options into one union (or the single option), in time linear
    in their number (an enum may hold 100,000 values)."""
    flat: list[TypeExpr] = []
    seen: set[str] = set()
    for opt in options:
        for o in opt.options if isinstance(opt, UnionOf) else (opt,):
            # the repr is the identity: `True` and `1` stay two options (they compare equal),
            # and constraints holding lists need no hash
            key = repr(o)
            if key not in seen:
                seen.add(key)
                flat.append(o)
    if any(isinstance(o, Scalar) and o.kind == "any" for o in flat):
        return Scalar("any")
    return flat[0] if len(flat) == 1 else UnionOf(tuple(flat))


def check_union_size(options: int, label: str, pointer: str) -> None:
    """Refuse a union of more than `MAX_UNION_OPTIONS` options that are not literals."""
    if options > MAX_UNION_OPTIONS:
        raise fail(
            "union-too-large",
            (
                f"a union of {options:,} options: at most {MAX_UNION_OPTIONS:,} besides literal "
                "values can be generated"
            ),
            file=label,
            pointer=pointer,
        )


def is_object_schema(schema: dict[str, Any]) -> bool:
    """An object with declared properties (a struct rather than a map)."""
    t = schema.get("type")
    return isinstance(schema.get("properties"), dict) and (
        t is None or t == "object" or (isinstance(t, list) and "object" in t)
    )


def type_of(schema: Any, builder: Hoister, owner: str, pointer: str, depth: int = 0) -> TypeExpr:
    """Convert a property schema to a type expression; `owner` names hoisted inline types;
    `depth`: how many arrays this one is nested in within the annotation being built."""
    if (
        schema is True
        or schema is None
        or (isinstance(schema, dict) and not set(schema) - DOC_KEYS)
    ):
        return Scalar("any")
    if schema is False or not isinstance(schema, dict):
        return Scalar("any")
    if "$ref" in schema:
        return Ref(builder.def_ref(ref_name(schema["$ref"])))
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and not _validating_keys(schema) - {"allOf"}:
        return type_of(all_of[0], builder, owner, pointer + "/allOf/0")
    if "const" in schema:
        value = schema["const"]
        return (
            Const(value) if isinstance(value, (str, int, bool)) or value is None else Scalar("any")
        )
    opts = options_of(schema)
    if opts is not None and (is_object_schema(schema) or _tagged_or_enum(schema)):
        return Ref(builder.hoist(owner, schema, pointer))
    if opts is not None:
        key = "anyOf" if "anyOf" in schema else "oneOf"
        check_union_size(
            sum(1 for o in opts if not (isinstance(o, dict) and "const" in o)),
            builder.label,
            pointer,
        )
        return union(
            [
                _inner(o, builder, _option_owner(owner, o), "", f"{pointer}/{key}/{i}", depth)
                for i, o in enumerate(opts)
            ]
        )
    if isinstance(schema.get("enum"), list):
        return union(
            [
                Const(v) if isinstance(v, (str, int, bool)) or v is None else Scalar("any")
                for v in schema["enum"]
            ]
        )
    types = schema.get("type")
    type_list = types if isinstance(types, list) else [types] if isinstance(types, str) else []
    if not type_list:
        return (
            Ref(builder.hoist(owner, schema, pointer))
            if is_object_schema(schema)
            else Scalar("any")
        )
    return union([_one_type(t, schema, builder, owner, pointer, depth) for t in type_list])


def _inner(
    schema: Any, builder: Hoister, owner: str, suffix: str, pointer: str, depth: int
) -> TypeExpr:
    """The type of an array's items, a map's values or a union's option, one level deeper:
    inline, or a named alias (`<Owner>Level<N>`) where one annotation would nest too deep for
    Python's parser (and the builder's recursion)."""
    if depth + 1 >= MAX_NESTED_ARRAYS and _nests(schema):
        level = sum(pointer.count(mark) for mark in _LEVEL_MARKS)
        return Ref(builder.hoist_later(f"{_stem(owner)}Level{level}", schema, pointer))
    return type_of(schema, builder, owner + suffix, pointer, depth + 1)


def _nests(schema: Any) -> bool:
    """Whether an inline schema holds arrays, maps or unions of its own (a scalar stays inline)."""
    return (
        isinstance(schema, dict)
        and "$ref" not in schema
        and (
            "items" in schema
            or isinstance(schema.get("additionalProperties"), dict)
            or "anyOf" in schema
            or "oneOf" in schema
        )
    )


def _stem(owner: str) -> str:
    """An owner name without the `Item`s and `Level<N>` that nested arrays add to it."""
    return _LEVEL_SUFFIX.sub("", owner) or owner


def _option_owner(owner: str, option: Any) -> str:
    """Name stem for an inline alternative: its `title` when it has one (`AgentResponse` +
    `Result`), so hoisted names never depend on the alternative's position."""
    title = option.get("title") if isinstance(option, dict) else None
    return owner + pascal(title) if isinstance(title, str) and title.strip() else owner


def _validating_keys(schema: dict[str, Any]) -> set[str]:
    """Keys that constrain values: not documentation, not `default` (read by the field), not
    `x-` extensions (`x-method`, `x-side`, the leniency hints, any other annotation)."""
    return {k for k in schema if k not in DOC_KEYS and k != "default" and not k.startswith("x-")}


def _tagged_or_enum(schema: dict[str, Any]) -> bool:
    enum = enum_shape(schema)
    return union_shape(schema) is not None or (enum is not None and enum.open)


def _one_type(
    t: str, schema: dict[str, Any], builder: Hoister, owner: str, pointer: str, depth: int
) -> TypeExpr:
    if t == "object":
        if is_object_schema(schema):
            return Ref(builder.hoist(owner, schema, pointer))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and set(extra) - DOC_KEYS:
            return MapOf(
                _inner(extra, builder, owner, "Value", pointer + "/additionalProperties", depth)
            )
        return Scalar("object")
    if t == "array":
        return ArrayOf(
            _inner(schema.get("items", {}), builder, owner, "Item", pointer + "/items", depth),
            _constraints(schema, _ARRAY_CONSTRAINTS),
            skip_invalid=bool(schema.get("x-deserialize-skip-invalid-items")),
        )
    kind = _SCALARS.get(t)
    if kind is None:
        return Scalar("any")
    if kind == "str":
        regex = _regex(schema["pattern"], builder, pointer) if "pattern" in schema else None
        return Scalar("str", schema.get("format"), _constraints(schema, _STRING_CONSTRAINTS), regex)
    if kind in ("int", "number"):
        return Scalar(kind, schema.get("format"), _constraints(schema, _NUMBER_CONSTRAINTS))  # type: ignore[arg-type]
    return Scalar(kind)  # type: ignore[arg-type]


def _regex(pattern: Any, builder: Hoister, pointer: str) -> Regex:
    """A `pattern` as the models run it; `bad-pattern` when it is no regular expression."""
    where = pointer + "/pattern"
    if not isinstance(pattern, str):
        raise fail(
            "bad-pattern",
            f"pattern must be a string, got {pattern!r}",
            file=builder.label,
            pointer=where,
        )
    try:
        return translate(pattern)
    except BadPattern as exc:
        raise fail(
            "bad-pattern", f"{exc} in {pattern!r}", file=builder.label, pointer=where
        ) from None
