"""Python spellings of IR nodes: annotations, defaults, docstrings, class bases.

These are the Jinja filters the model templates use; they read IR nodes only.
"""

from __future__ import annotations

import json
from typing import Any

from codegen.ir.nodes import ArrayOf, Const, Field, MapOf, Protocol, Ref, Scalar, Struct, TaggedUnion, TypeExpr, UnionOf

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
        if text not in parts:
            parts.append(text)
    if "None" in parts:  # keep None last: `X | None`
        parts = [p for p in parts if p != "None"] + ["None"]
    return " | ".join(parts)


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


def own_lenient(struct: Struct) -> bool:
    """Whether this struct declares lenient fields itself (so it needs its own validator)."""
    return any(f.lenience for f in struct.fields)


def tag_names(struct: Struct) -> list[str]:
    """Python names of the tag fields this struct fixes with a default."""
    return [f.py_name for f in struct.fields if f.tag and f.default_json is not None]


def union_choices(union: TaggedUnion) -> list[tuple[str, str]]:
    """(class name, Tag(...) argument) pairs of a union, unknown last."""
    out = [(v.target, repr(v.tag) if v.tag is not None else "NONE_TAG") for v in union.variants]
    if union.unknown:
        out.append((union.unknown, "UNKNOWN_TAG"))
    return out


def tags_expr(struct: Struct, protocol: Protocol) -> str:
    """The `__acp_tags__` value: this struct's fixed tags plus its tagged base's."""
    own = f"frozenset({sorted(tag_names(struct))!r})"
    base = protocol.get(struct.base) if struct.base else None
    if isinstance(base, Struct) and base.role in ("variant", "unknown"):
        return f"{base.name}.__acp_tags__ | {own}"
    return own
