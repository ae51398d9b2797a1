"""Builders: the typed one-call senders of the generated peers, derived from the definitions.

Owns which builders exist and their signatures: one per variant of the fanned-out
`session/update` union (on the agent side's session handle) and one per method a peer sends
(its fields as parameters, alongside the params model). Required fields are positional (or
keyword) parameters, the session id first, then the content, then the rest in schema order;
optional ones are keyword-only, with `None` meaning omitted; a
field of a *text union* (a tagged union with a `text` variant that needs nothing but its text,
ACP's `ContentBlock`) also takes a plain `str`, and an array of one also a single item or `str`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from acp_codegen.ir import naming
from acp_codegen.ir.nodes import (
    ArrayOf,
    Method,
    Protocol,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)
from acp_codegen.ir.spelling import all_fields
from acp_codegen.ir.typenames import TypeNames


@dataclass(frozen=True)
class TextUnion:
    """A tagged union a plain `str` converts to (its `text` variant)."""

    union: str
    variant: str
    converter: str  # name of the generated conversion function
    annotation: str  # the union as the module names it


@dataclass(frozen=True)
class Param:
    """One builder parameter: a field of the model it builds."""

    name: str
    annotation: str
    required: bool
    convert: str | None  # the converter function applied to the argument, if any


@dataclass(frozen=True)
class Builder:
    """A typed sender: builds `model` from its parameters (required ones first, in the order they
    are passed positionally; optional ones keyword-only, `None` meaning omitted)."""

    name: str
    model: str  # the class it builds (a name of `models`)
    params: tuple[Param, ...]
    description: str | None
    positional: tuple[str, ...]  # the required parameters, in order
    optional: tuple[str, ...]  # the keyword-only ones
    converters: tuple[tuple[str, str], ...]  # (parameter, converter function)

    @property
    def args_source(self) -> str:
        """The required parameters as a tuple expression (`(a, b)`, `(a,)`, `()`)."""
        return (
            f"({self.positional[0]},)"
            if len(self.positional) == 1
            else f"({', '.join(self.positional)})"
        )

    @property
    def kwargs_source(self) -> str:
        """The optional parameters as a dict expression (name -> argument)."""
        return "{" + ", ".join(f'"{name}": {name}' for name in self.optional) + "}"


def text_unions(protocol: Protocol, types: TypeNames | None = None) -> dict[str, TextUnion]:
    """The unions a `str` converts to, by union name (structural: see the module docstring);
    `types` spells their annotations."""
    types = types or TypeNames(protocol)
    found: dict[str, TextUnion] = {}
    for definition in protocol.definitions:
        if not isinstance(definition, TaggedUnion):
            continue
        variant = next((v for v in definition.variants if v.tag == "text"), None)
        target = protocol.get(variant.target) if variant else None
        if not isinstance(target, Struct):
            continue
        needed = [f for f in all_fields(target, protocol) if f.required and not f.tag]
        if (
            [f.wire_name for f in needed] == ["text"]
            and isinstance(needed[0].type, Scalar)
            and needed[0].type.kind == "str"
        ):
            converter = "_as_" + naming.snake(definition.name)
            found[definition.name] = TextUnion(
                definition.name, target.name, converter, types.use(definition.name)
            )
    return found


def _param(
    field_type: TypeExpr,
    name: str,
    required: bool,
    types: TypeNames,
    texts: Mapping[str, TextUnion],
) -> Param:
    inner = field_type
    nullable = False
    if isinstance(inner, UnionOf):
        rest = [o for o in inner.options if not (isinstance(o, Scalar) and o.kind == "none")]
        nullable = len(rest) < len(inner.options)
        if len(rest) == 1:
            inner = rest[0]
    if isinstance(inner, Ref) and inner.name in texts:
        text = texts[inner.name]
        annotation, convert = f"{types.use(inner.name)} | str", text.converter
    elif isinstance(inner, ArrayOf) and isinstance(inner.item, Ref) and inner.item.name in texts:
        text = texts[inner.item.name]
        item = types.use(inner.item.name)
        types.symbols.add("Sequence")
        annotation, convert = f"Sequence[{item} | str] | {item} | str", text.converter + "_items"
    else:
        annotation = (
            types.parameter(field_type) if required else types.optional_parameter(field_type)
        )
        return Param(name, annotation, required, None)
    if nullable or not required:
        annotation += " | None"
    return Param(name, annotation, required, convert)


def builder_for(
    protocol: Protocol,
    name: str,
    model: str,
    skip: frozenset[str],
    description: str | None,
    types: TypeNames,
    texts: Mapping[str, TextUnion],
) -> Builder:
    """The builder of one model: its non-tag fields (less `skip`, by wire name) as parameters,
    spelled by `types` (which collects the names they use); `texts`: the text unions."""
    struct = protocol.get(model)
    assert isinstance(struct, Struct), model
    fields = [f for f in all_fields(struct, protocol) if not f.tag and f.wire_name not in skip]
    params = [_param(f.type, f.py_name, f.required, types, texts) for f in fields]

    def rank(pair: tuple[Param, str]) -> int:  # the session, then the content, then the rest
        param, wire = pair
        return 0 if wire == "sessionId" else 1 if param.convert else 2

    required = sorted(
        ((p, f.wire_name) for p, f in zip(params, fields, strict=True) if p.required), key=rank
    )
    ordered = [p for p, _ in required] + [p for p in params if not p.required]
    return Builder(
        name,
        model,
        tuple(ordered),
        description,
        tuple(p.name for p in ordered if p.required),
        tuple(p.name for p in ordered if not p.required),
        tuple((p.name, p.convert) for p in ordered if p.convert),
    )


def update_builders(
    protocol: Protocol,
    cases: Iterable[tuple[str, str, str | None]],
    types: TypeNames,
    texts: Mapping[str, TextUnion],
) -> tuple[Builder, ...]:
    """One builder per (tag, variant class, description) of the fanned-out union; a variant that
    is a union itself (split by a second tag) gets one per variant of its own, named by both tags
    (its no-tag variant by the first alone)."""
    leaves = [
        leaf for tag, cls, doc in cases for leaf in _leaves(protocol, naming.snake(tag), cls, doc)
    ]
    return tuple(
        builder_for(protocol, name, cls, frozenset(), doc, types, texts)
        for name, cls, doc in leaves
    )


def _leaves(
    protocol: Protocol, name: str, target: str, doc: str | None
) -> Iterable[tuple[str, str, str | None]]:
    found = protocol.get(target)
    if not isinstance(found, TaggedUnion):
        yield name, target, doc
        return
    for variant in found.variants:
        suffix = "_" + naming.snake(variant.tag) if variant.tag is not None else ""
        yield from _leaves(protocol, name + suffix, variant.target, variant.description or doc)


def short_name(method: Method) -> str | None:
    """The name the TypeScript SDK gives the sender: the params model's, less
    `Request`/`Notification`."""
    if not method.params:
        return None
    return naming.snake(method.params.removesuffix("Request").removesuffix("Notification"))


def method_builder(
    protocol: Protocol, method: Method, types: TypeNames, texts: Mapping[str, TextUnion]
) -> Builder | None:
    """The builder of a method's params (None: the method takes none)."""
    if not method.params or not isinstance(protocol.get(method.params), Struct):
        return None
    return builder_for(
        protocol, method.handler, method.params, frozenset(), method.description, types, texts
    )
