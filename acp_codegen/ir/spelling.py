"""Python spellings of IR type expressions, fields, unions and aliases, with the names they use.

Owns how a JSON Schema type reads in Python: `StrictStr`, `JsonInt`, `Sequence[X]`, `X | None`,
`Annotated[...]` markers for the runtime's validation hooks, tagged unions as callable
discriminators with `Tag`s. Every spelling records the names it uses in a `Uses` set, so the
module that holds it imports exactly those (`acp_codegen.ir.modules`). Layout is the formatter's
business: spellings are single expressions of any length.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from acp_runtime.models import wire_name

from acp_codegen.ir.nodes import (
    Alias,
    ArrayOf,
    Const,
    Field,
    MapOf,
    Protocol,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)
from acp_codegen.ir.patterns import Regex

Uses = set[str]
"""The names a spelling uses: definitions (by Python name) and the symbols of `IMPORTS`."""

IMPORTS: dict[str, tuple[str, str | None]] = {
    **{n: ("typing", None) for n in ("Annotated", "Any", "ClassVar", "Literal", "TypeAlias")},
    **{
        n: ("pydantic", None)
        for n in ("Field", "StrictBool", "StrictFloat", "StrictInt", "StrictStr", "Tag")
    },
    **{
        n: ("acp_runtime.bindings", None)
        for n in (
            "NONE_TAG",
            "NOT_KNOWN_TAG",
            "NOT_NULL",
            "ONE_OF",
            "STRICT_FIRST",
            "UNKNOWN_TAG",
            "AcpModel",
            "Apart",
            "Integer",
            "JsonInt",
            "Sequence",
            "TagValue",
            "TaggedBy",
            "TaggedModel",
        )
    },
    "_re": ("re", "_re"),  # `import re as _re`: a field can never be named `_re`
    "_typing": ("typing", "_typing"),  # a validated default's `cast`; a field may be named `cast`
}
"""Symbol -> (module, alias): where each name a spelling uses comes from (alias: a whole-module
import under that name). Definitions are not here: they come from the package's own modules."""

_FIELD_ARGS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "multipleOf": "multiple_of",
    "minItems": "min_length",
    "maxItems": "max_length",
}
_SCALAR = {
    "str": "StrictStr",
    "int": "StrictInt",
    "bool": "StrictBool",
    "any": "Any",
    "none": "None",
}


def python_literal(value: Any) -> str:
    """A JSON value as Python source (strings in double quotes unless that needs more escapes)."""
    if isinstance(value, str):
        literal = repr(value)  # single-quoted unless `value` has a ' and no "
        return f'"{literal[1:-1]}"' if '"' not in value and "'" not in value else literal
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items())
            + "}"
        )
    return repr(json.loads(json.dumps(value)))


def _constrained(
    base: str, constraints: tuple[tuple[str, Any], ...], uses: Uses, regex: Regex | None = None
) -> str:
    args = [
        f"{_FIELD_ARGS[k]}={_constraint_value(k, v, regex, uses)}"
        for k, v in constraints
        if k in _FIELD_ARGS
    ]
    if not args:
        return base
    uses.update(("Annotated", "Field"))
    return f"Annotated[{base}, Field({', '.join(args)})]"


def _constraint_value(key: str, value: Any, regex: Regex | None, uses: Uses) -> str:
    """A constraint's value as source; a pattern as its engine needs it (a compiled `re.Pattern`
    makes pydantic use Python's `re`)."""
    if key != "pattern" or regex is None:
        return python_literal(value)
    literal = python_literal(regex.text)
    if regex.engine != "python-re":
        return literal
    uses.add("_re")
    return f"_re.compile({literal})"


def annotation(expr: TypeExpr, uses: Uses) -> str:
    """The Python annotation of a type expression."""
    if isinstance(expr, Scalar):
        return _scalar(expr, uses)
    if isinstance(expr, Ref):
        uses.add(expr.name)
        return expr.name
    if isinstance(expr, ArrayOf):
        uses.add("Sequence")  # any sequence for type checkers, a list at run time (the runtime's)
        item = annotation(expr.item, uses)
        return _constrained(
            f"Sequence[{item}]", tuple(c for c in expr.constraints if c[0] != "uniqueItems"), uses
        )
    if isinstance(expr, MapOf):
        return f"dict[str, {annotation(expr.value, uses)}]"
    if isinstance(expr, Const):
        if expr.value is None:
            return "None"
        uses.add("Literal")
        return f"Literal[{python_literal(expr.value)}]"
    members, markers, nullable = _union_parts(expr, uses)
    if markers:
        uses.add("Annotated")
    text = f"Annotated[{members}, {', '.join(markers)}]" if markers else members
    return text + " | None" if nullable and text != "None" else text


def _scalar(expr: Scalar, uses: Uses) -> str:
    if expr.kind == "int":  # JSON Schema's `integer` (`2.0` is one), its bounds in its marker
        args = [
            f"{_FIELD_ARGS[k]}={python_literal(v)}" for k, v in expr.constraints if k in _FIELD_ARGS
        ]
        if not args:
            uses.add("JsonInt")
            return "JsonInt"
        uses.update(("Annotated", "Integer"))
        return f"Annotated[int, Integer({', '.join(args)})]"
    if expr.kind == "number":
        uses.update(("StrictInt", "StrictFloat"))
        ints = _constrained("StrictInt", expr.constraints, uses)
        return f"{ints} | {_constrained('StrictFloat', expr.constraints, uses)}"
    if expr.kind == "object":
        uses.add("Any")
        return "dict[str, Any]"
    base = _SCALAR[expr.kind]
    if base != "None":
        uses.add(base)
    return _constrained(base, expr.constraints, uses, expr.regex)


def _union_parts(expr: UnionOf, uses: Uses) -> tuple[str, list[str], bool]:
    """(the options joined by `|`, the annotation markers, whether `None` is an option)."""
    # the literal options in one `Literal[...]` where the first was: a flat subscript of any
    # length (`Literal["a"] | Literal["b"] | ...` nests, and Python cannot compile 3,000 of them)
    texts: list[str] = []
    literals: list[str] = []
    for option in expr.options:
        if isinstance(option, Const) and option.value is not None:
            if not literals:
                texts.append("")  # the place of the merged literal
            literals.append(python_literal(option.value))
        else:
            texts.append(annotation(option, uses))
    if literals:
        uses.add("Literal")
        texts[texts.index("")] = f"Literal[{', '.join(literals)}]"
    parts = [text for text in dict.fromkeys(texts) if text != "None"]
    markers: list[str] = []
    if len(parts) > 1 and any(isinstance(o, Ref) for o in expr.options):
        # a fitting option beats a repaired one; with `oneOf`, no other option may fit as well
        markers = ["STRICT_FIRST", "ONE_OF"] if expr.exclusive else ["STRICT_FIRST"]
        uses.update(markers)
    return " | ".join(parts) or "None", markers, "None" in texts


def alias_value(alias: Alias, uses: Uses) -> str:
    """The value of a module-level `Name: TypeAlias = ...`."""
    text = annotation(alias.type, uses)
    if not alias.apart:
        return text
    uses.add("Apart")
    return f"Apart[{text}]"


@dataclass(frozen=True)
class FieldSpelling:
    """One struct field as Python: `name: annotation = default`."""

    name: str
    annotation: str
    default: str | None


def field_spelling(field: Field, protocol: Protocol, uses: Uses) -> FieldSpelling:
    """How one struct field reads in its class."""
    ann = annotation(field.type, uses)
    field_args: list[str] = []
    metadata: list[str] = []
    if wire_name(field.py_name) != field.wire_name:  # else the runtime's alias generator's name
        field_args.append(f"alias={python_literal(field.wire_name)}")
    default: str | None = None
    if field.tag:
        enum_ref = isinstance(field.type, Ref)
        if field.default_json is not None:
            const = json.loads(field.default_json)
            default = (
                f"{ann}.{_const_name(protocol, ann, const)}" if enum_ref else python_literal(const)
            )
            if enum_ref:  # typed by the open tag enum, but only this variant's value is valid
                metadata.append(f"TagValue({python_literal(const)})")
                uses.add("TagValue")
        elif enum_ref:  # an unknown variant: any tag its union does not name
            metadata.append("NOT_KNOWN_TAG")
            uses.add("NOT_KNOWN_TAG")
    elif not field.required:
        if field.default_json is not None:
            value = json.loads(field.default_json)
            default = python_literal(value)
            if value is None and not field.nullable:
                ann = f"{ann} | None"
            elif value is not None and _has_ref(field.type):  # the model or enum, not raw JSON
                # typed Any: pydantic before 2.12 types `Field(default=x)` as x's type, not the
                # field's
                uses.update(("Field", "_typing"))
                default = (
                    f"Field(default=_typing.cast(_typing.Any, {default}), validate_default=True)"
                )
        elif field.nullable:
            default = "None"
        else:
            uses.update(("Annotated", "NOT_NULL"))
            ann = f"Annotated[{ann} | None, NOT_NULL]"
            default = "None"
    if field_args:
        uses.add("Field")
        metadata.append(f"Field({', '.join(field_args)})")
    if metadata:
        uses.add("Annotated")
        ann = f"Annotated[{', '.join([ann, *metadata])}]"
    return FieldSpelling(field.py_name, ann, default)


def _has_ref(expr: TypeExpr) -> bool:
    if isinstance(expr, Ref):
        return True
    if isinstance(expr, ArrayOf):
        return _has_ref(expr.item)
    if isinstance(expr, MapOf):
        return _has_ref(expr.value)
    if isinstance(expr, UnionOf):
        return any(_has_ref(o) for o in expr.options)
    return False


def _const_name(protocol: Protocol, enum_name: str, value: str) -> str:
    enum = protocol.get(enum_name)
    for v in getattr(enum, "values", ()):
        if v.value == value:
            return str(v.const_name)
    raise KeyError(f"{enum_name} has no value {value!r}")


def all_fields(struct: Struct, protocol: Protocol) -> list[Field]:
    """Own and inherited fields, base first (a field a subclass redefines in its place there)."""
    chain: list[Struct] = []
    names: set[str] = set()
    current: object = struct
    while (
        isinstance(current, Struct) and current.name not in names
    ):  # iterative: bases of any depth
        chain.append(current)
        names.add(current.name)
        current = protocol.get(current.base) if current.base else None
    fields: list[Field] = []
    for cls in reversed(chain):
        own = {f.wire_name for f in cls.fields}
        fields = [f for f in fields if f.wire_name not in own] + list(cls.fields)
    return fields


def loose_none(union: TaggedUnion, protocol: Protocol) -> bool:
    """Whether the union's no-tag variant does not constrain the tag at all (the schema option
    has no tag property), so that any value it accepts is valid whatever its tag says."""
    none = union.none_variant
    target = protocol.get(none.target) if none else None
    return isinstance(target, Struct) and all(
        f.wire_name != union.tag_wire for f in all_fields(target, protocol)
    )


def union_value(union: TaggedUnion, protocol: Protocol, uses: Uses) -> str:
    """The value of a tagged union's type alias.

    Variants are chosen by the tag (the runtime's `TaggedBy` reads the known tags and the no-tag
    and unknown choices from the `Tag`s). A no-tag variant that leaves the tag
    unconstrained is an alternative of its own instead: it is tried, left to right, when the
    tagged variants do not fit (absent, unknown or malformed tag, or a known tag whose variant
    rejects the payload), as the schema's `anyOf` accepts such values through that option.
    """
    loose = loose_none(union, protocol)
    none = union.none_variant
    choices = [(v.target, python_literal(v.tag)) for v in union.variants if v.tag is not None]
    if none is not None and not loose:
        choices.append((none.target, "NONE_TAG"))
    if union.unknown:
        choices.append((union.unknown, "UNKNOWN_TAG"))
    uses.update(tag for _, tag in choices if tag in ("NONE_TAG", "UNKNOWN_TAG"))
    uses.update(target for target, _ in choices)
    uses.update(("Annotated", "Tag", "TaggedBy"))
    members = " | ".join(f"Annotated[{target}, Tag({tag})]" for target, tag in choices)
    arguments = [python_literal(union.tag_wire)]
    if union.tag_py != union.tag_wire:
        arguments.append(python_literal(union.tag_py))
    if union.lenient_tag:
        arguments.append("lenient=True")
    tagged = f"Annotated[{members}, TaggedBy({', '.join(arguments)})]"
    if not loose or none is None:
        return tagged
    uses.update(("Field", "STRICT_FIRST", none.target))
    return f'Annotated[{tagged} | {none.target}, Field(union_mode="left_to_right"), STRICT_FIRST]'
