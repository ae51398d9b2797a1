"""IR builder, tagged unions: a union's variants hoisted into named structs.

Each known tag becomes `<Union><Tag>` (a struct with the tag fixed), the "Custom or future"
fallback becomes `Unknown<Union>` (keeps any other tag and the raw payload), a no-tag option
becomes `<Union>None`, and properties shared by every variant a `<Union>Base`. A variant whose
payload is itself a tagged union is re-tagged level by level (`_nested`). Open unions get an
open enum of their tag values. Called by `acp_codegen.ir.build.Builder` for each union it finds.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from acp_codegen.errors import pointer_join
from acp_codegen.ir import naming
from acp_codegen.ir.nodes import (
    Const,
    Enum,
    EnumValue,
    Field,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    Variant,
)
from acp_codegen.ir.shapes import UnionShape
from acp_codegen.ir.types import check_union_size
from acp_codegen.resolve import ref_name

if TYPE_CHECKING:
    from acp_codegen.ir.build import Builder


def build_union(
    b: Builder,
    name: str,
    schema: dict[str, Any],
    shape: UnionShape,
    pointer: str,
    def_key: str | None,
) -> None:
    """Add a tagged union, its variants, unknown fallback, base and tag enum to the builder."""
    tag = shape.tag
    key = "anyOf" if "anyOf" in schema else "oneOf"
    check_union_size(len(shape.known), b.label, pointer)
    options = schema[key]
    base: str | None = None
    base_tag: Field | None = None
    if isinstance(schema.get("properties"), dict):
        base_struct = b._struct(b._fresh(name + "Base"), schema, pointer, role="base")
        base_tag = next((f for f in base_struct.fields if f.wire_name == tag), None)
        base_struct = replace(
            base_struct, fields=tuple(f for f in base_struct.fields if f.wire_name != tag)
        )
        b._add(base_struct)
        base = base_struct.name
    tag_enum: str | None = None
    if shape.fallback is not None:
        tag_enum = _tag_enum(b, name, shape, base_tag is not None, pointer)
    # the shape holds the schema's own option objects: find their places by identity, in time
    # linear in the number of options (`list.index` compares dicts and is quadratic)
    place = {id(option): i for i, option in enumerate(options)}
    variants: list[Variant] = []
    for tag_value, option in shape.known:
        i = place[id(option)]
        target = _variant(
            b,
            name,
            tag,
            tag_value,
            option,
            f"{pointer}/{key}/{i}",
            base,
            tag_enum if base_tag else None,
        )
        variants.append(Variant(tag_value, target, option.get("description")))
    if shape.none is not None:
        i = place[id(shape.none)]
        none_name = b._fresh(name + "None")
        none_struct = b._struct(
            none_name, shape.none, f"{pointer}/{key}/{i}", role="variant", base=base
        )
        if base_tag is not None:  # the absent/null tag keeps the base property's leniency
            fields = tuple(
                replace(f, lenience=base_tag.lenience) if f.wire_name == tag else f
                for f in none_struct.fields
            )
            none_struct = replace(none_struct, fields=fields)
        b._add(none_struct)
        variants.append(Variant(None, none_name, shape.none.get("description")))
    unknown: str | None = None
    if shape.fallback is not None:
        i = place[id(shape.fallback)]
        unknown = b._fresh("Unknown" + name)
        tag_field = _tag_field(
            b, tag, Ref(tag_enum) if tag_enum else Scalar("str"), f"{pointer}/{key}/{i}", None
        )
        b._object(
            unknown,
            shape.fallback,
            f"{pointer}/{key}/{i}",
            role="unknown",
            base=base,
            skip=frozenset({tag}),
            leading=(tag_field,),
        )
    lenient_tag = base_tag is not None and "default_on_error" in base_tag.lenience
    b._add(
        TaggedUnion(
            name,
            tag,
            naming.field_name(tag),
            tuple(variants),
            unknown,
            schema.get("description"),
            pointer,
            tag_enum,
            def_key,
            lenient_tag,
        )
    )


def _tag_field(b: Builder, tag: str, type_: TypeExpr, pointer: str, const: str | None) -> Field:
    return Field(
        wire_name=tag,
        py_name=naming.field_name(tag),
        type=type_,
        required=const is None,
        description=None,
        pointer=pointer_join(pointer, "properties", tag),
        default_json=json.dumps(const) if const is not None else None,
        tag=True,
    )


def _tag_enum(b: Builder, union: str, shape: UnionShape, tag_is_field: bool, pointer: str) -> str:
    preferred = naming.pascal(shape.tag) if tag_is_field else union + "Tag"
    name = (
        preferred
        if preferred not in b.reserved and preferred not in b.out
        else b._fresh(union + "Tag")
    )
    values = tuple(
        EnumValue(v, naming.constant(v), opt.get("description")) for v, opt in shape.known
    )
    fallback = shape.fallback or {}
    fallback_desc = (fallback.get("properties") or {}).get(shape.tag, {}).get("description")
    b._add(Enum(name, values, True, fallback_desc or f"Tag values of `{union}`.", pointer, None))
    return name


def _variant(
    b: Builder,
    union: str,
    tag: str,
    value: str,
    option: dict[str, Any],
    pointer: str,
    base: str | None,
    tag_enum: str | None,
) -> str:
    name = b._fresh(union + naming.pascal(value))
    tag_type: TypeExpr = Ref(tag_enum) if tag_enum else Const(value)
    tag_field = _tag_field(b, tag, tag_type, pointer, value)
    refs = [p for p in option.get("allOf") or () if isinstance(p, dict) and "$ref" in p]
    own = {k for k in (option.get("properties") or {}) if k != tag}
    if len(refs) == 1 and not own and base is None:
        inner = b.built(ref_name(refs[0]["$ref"]))
        if isinstance(inner, TaggedUnion):
            return _nested(b, name, inner, tag_field)
    b._object(
        name,
        option,
        pointer,
        role="variant",
        base=base,
        skip=frozenset({tag}),
        leading=(tag_field,),
    )
    return name


def _nested(b: Builder, name: str, inner: TaggedUnion, tag_field: Field) -> str:
    """A variant whose payload is another tagged union: re-tag each inner variant."""
    variants: list[Variant] = []
    for v in inner.variants:
        target = b.out[v.target]
        suffix = v.target.removeprefix(inner.name)
        sub = b._fresh(name + suffix)
        if isinstance(target, TaggedUnion):
            _nested(b, sub, target, tag_field)
        else:
            b._add(
                Struct(
                    sub,
                    target.description if isinstance(target, Struct) else None,
                    (tag_field,),
                    tag_field.pointer,
                    base=v.target,
                    role="variant",
                )
            )
        variants.append(Variant(v.tag, sub, v.description))
    unknown = None
    if inner.unknown:
        unknown = b._fresh("Unknown" + name)
        b._add(
            Struct(
                unknown, None, (tag_field,), tag_field.pointer, base=inner.unknown, role="unknown"
            )
        )
    b._add(
        TaggedUnion(
            name,
            inner.tag_wire,
            inner.tag_py,
            tuple(variants),
            unknown,
            inner.description,
            inner.pointer,
            inner.tag_enum,
            None,
            inner.lenient_tag,
        )
    )
    return name
