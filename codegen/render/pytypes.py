"""Python spellings of IR nodes: annotations, defaults, docstrings, class bases.

These are the Jinja filters the model templates use; they read IR nodes only.
"""

from __future__ import annotations

import json
from typing import Any

from codegen.ir.nodes import (
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
_SCALAR = {"str": "StrictStr", "int": "StrictInt", "bool": "StrictBool", "any": "Any", "none": "None", "object": "dict[str, Any]"}


def _constrained(base: str, constraints: tuple[tuple[str, Any], ...]) -> str:
    args = [f"{_FIELD_ARGS[k]}={v!r}" for k, v in constraints if k in _FIELD_ARGS]
    return f"Annotated[{base}, Field({', '.join(args)})]" if args else base


def annotation(expr: TypeExpr) -> str:
    """The Python annotation for a type expression."""
    if isinstance(expr, Scalar):
        if expr.kind == "number":
            return f"{_constrained('StrictInt', expr.constraints)} | {_constrained('StrictFloat', expr.constraints)}"
        return _constrained(_SCALAR[expr.kind], expr.constraints)
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, ArrayOf):
        return _constrained(f"list[{annotation(expr.item)}]", tuple(c for c in expr.constraints if c[0] != "uniqueItems"))
    if isinstance(expr, MapOf):
        return f"dict[str, {annotation(expr.value)}]"
    if isinstance(expr, Const):
        return "None" if expr.value is None else f"Literal[{expr.value!r}]"
    parts: list[str] = []
    for option in expr.options:
        text = annotation(option)
        if text not in parts and text != "None":
            parts.append(text)
    if not parts:
        return "None"
    text = " | ".join(parts)
    if len(parts) > 1 and any(isinstance(o, Ref) for o in expr.options):
        # a fitting option beats a repaired one; with `oneOf`, no other option may fit as well
        text = f"Annotated[{text}, STRICT_FIRST{', ONE_OF' if expr.exclusive else ''}]"
    return text + " | None" if any(annotation(o) == "None" for o in expr.options) else text


def python_literal(value: Any) -> str:
    """A JSON value as Python source."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(json.loads(json.dumps(value)))


def field_line(field: Field, protocol: Protocol) -> str:
    """`name: Annotation = default` for one struct field."""
    ann = annotation(field.type)
    field_args: list[str] = []
    metadata: list[str] = []
    if field.py_name != field.wire_name:
        field_args.append(f"alias={field.wire_name!r}")
    default: str | None = None
    if field.tag:
        enum_ref = isinstance(field.type, Ref)
        if field.default_json is not None:
            const = json.loads(field.default_json)
            default = f"{ann}.{_const_name(protocol, ann, const)}" if enum_ref else repr(const)
            if enum_ref:  # typed by the open tag enum, but only this variant's value is valid
                metadata.append(f"TagValue({const!r})")
        elif enum_ref:  # an unknown variant: any tag its union does not name
            metadata.append("NOT_KNOWN_TAG")
    elif not field.required:
        if field.default_json is not None:
            value = json.loads(field.default_json)
            default = python_literal(value)
            if value is None and not field.nullable:
                ann = f"{ann} | None"
            elif value is not None and _has_ref(field.type):  # the model or enum, not raw JSON
                default = f"Field(default={default}, validate_default=True)"
        elif field.nullable:
            default = "None"
        else:
            ann = f"Annotated[{ann} | None, NOT_NULL]"
            default = "None"
    if field_args:
        metadata.append(f"Field({', '.join(field_args)})")
    if metadata:
        ann = f"Annotated[{ann}, {', '.join(metadata)}]"
    return f"{field.py_name}: {ann}" + (f" = {default}" if default is not None else "")


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


def docstring(text: str | None) -> str:
    """A triple-quoted docstring literal (escaped) for a description."""
    body = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body += " "
    return f'"""{body}"""'


def struct_bases(struct: Struct, protocol: Protocol) -> str:
    """The base classes of a struct's class statement."""
    tagged = struct.role in ("variant", "unknown")
    if struct.base is None:
        return "TaggedModel" if tagged else "AcpModel"
    base = protocol.get(struct.base)
    base_tagged = isinstance(base, Struct) and base.role in ("variant", "unknown")
    return f"{struct.base}, TaggedModel" if tagged and not base_tagged else struct.base


def all_fields(struct: Struct, protocol: Protocol) -> list[Field]:
    """Own and inherited fields, base first."""
    base = protocol.get(struct.base) if struct.base else None
    inherited = all_fields(base, protocol) if isinstance(base, Struct) else []
    own = {f.wire_name for f in struct.fields}
    return [f for f in inherited if f.wire_name not in own] + list(struct.fields)


def lenient_rules(struct: Struct, protocol: Protocol) -> dict[str, list[str]]:
    """Wire name -> leniency rules, including inherited fields."""
    return {f.wire_name: list(f.lenience) for f in all_fields(struct, protocol) if f.lenience}


def rules_literal(rules: dict[str, list[str]]) -> str:
    """Python source of a `__acp_lenient__` mapping (wire name -> frozenset of rules)."""
    items = ", ".join(f"{k!r}: frozenset({sorted(v)!r})" for k, v in rules.items())
    return "{" + items + "}"


def own_lenient(struct: Struct) -> bool:
    """Whether this struct declares lenient fields itself (so it needs its own validator)."""
    return any(f.lenience for f in struct.fields)


def tag_names(struct: Struct) -> list[str]:
    """Python names of the tag fields this struct fixes with a default."""
    return [f.py_name for f in struct.fields if f.tag and f.default_json is not None]


def tags_expr(struct: Struct, protocol: Protocol) -> str:
    """The `__acp_tags__` value: this struct's fixed tags plus its tagged base's."""
    own = f"frozenset({sorted(tag_names(struct))!r})"
    base = protocol.get(struct.base) if struct.base else None
    if isinstance(base, Struct) and base.role in ("variant", "unknown"):
        return f"{base.name}.__acp_tags__ | {own}"
    return own


def loose_none(union: TaggedUnion, protocol: Protocol) -> bool:
    """Whether the union's no-tag variant does not constrain the tag at all (the schema option
    has no tag property), so that any value it accepts is valid whatever its tag says."""
    none = union.none_variant
    target = protocol.get(none.target) if none else None
    return isinstance(target, Struct) and all(f.wire_name != union.tag_wire for f in all_fields(target, protocol))


def union_annotation(union: TaggedUnion, protocol: Protocol) -> str:
    """The annotation a tagged union's type alias stands for.

    Variants are chosen by the tag (`tag_discriminator`). A no-tag variant that leaves the tag
    unconstrained is an alternative of its own instead: it is tried, left to right, when the
    tagged variants do not fit (absent, unknown or malformed tag, or a known tag whose variant
    rejects the payload), as the schema's `anyOf` accepts such values through that option.
    """
    loose = loose_none(union, protocol)
    none = union.none_variant
    choices = [(v.target, repr(v.tag)) for v in union.variants if v.tag is not None]
    if none is not None and not loose:
        choices.append((none.target, "NONE_TAG"))
    if union.unknown:
        choices.append((union.unknown, "UNKNOWN_TAG"))
    members = "\n    | ".join(f"Annotated[{cls}, Tag({tag})]" for cls, tag in choices)
    discriminator = (
        f"Discriminator(tag_discriminator({union.tag_wire!r}, {union.tag_py!r}, "
        f"frozenset({python_literal(list(union.known_tags))}), has_none={none is not None and not loose}, "
        f"has_unknown={union.unknown is not None}, lenient={union.lenient_tag}))"
    )
    tagged = f"Annotated[\n    {members},\n    {discriminator},\n]"
    if not loose or none is None:
        return tagged
    return f'Annotated[{tagged} | {none.target}, Field(union_mode="left_to_right"), STRICT_FIRST]'
