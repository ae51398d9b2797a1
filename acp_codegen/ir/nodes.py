"""IR nodes: small frozen dataclasses describing the protocol, independent of any output format.

Every name, order and Python spelling the renderers use is decided when these nodes are built
(`acp_codegen.ir.build`); templates only read them. Type expressions (`TypeExpr`) describe a
field's value; definitions (`Struct`, `TaggedUnion`, `Enum`, `Alias`) are the named things;
`Method` ties wire methods to their params/result definitions and handling side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from acp_codegen.ir.patterns import Regex

Lenience = Literal["default_on_error", "default_on_null", "skip_invalid_items"]
ScalarKind = Literal["str", "int", "number", "bool", "any", "none", "object"]


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar (or any JSON value, or a free-form object) with its constraints; `regex`:
    the `pattern` constraint as the models run it (translated, with its engine)."""

    kind: ScalarKind
    format: str | None = None
    constraints: tuple[tuple[str, Any], ...] = ()
    regex: Regex | None = None


@dataclass(frozen=True)
class Ref:
    """A reference to a named definition by its Python name."""

    name: str


@dataclass(frozen=True)
class ArrayOf:
    """A JSON array; `skip_invalid` drops items that fail validation (a leniency hint)."""

    item: TypeExpr
    constraints: tuple[tuple[str, Any], ...] = ()
    skip_invalid: bool = False


@dataclass(frozen=True)
class MapOf:
    """A JSON object used as a string-keyed map."""

    value: TypeExpr


@dataclass(frozen=True)
class Const:
    """A single literal JSON value."""

    value: str | int | bool | None


@dataclass(frozen=True)
class UnionOf:
    """An untagged union; `None` appears as `Scalar("none")`. `exclusive`: the schema's `oneOf`
    over structs that could overlap, so a value must fit exactly one option."""

    options: tuple[TypeExpr, ...]
    exclusive: bool = False


TypeExpr = Scalar | Ref | ArrayOf | MapOf | Const | UnionOf


@dataclass(frozen=True)
class Field:
    """One property of a struct."""

    wire_name: str
    py_name: str
    type: TypeExpr
    required: bool
    description: str | None
    pointer: str
    default_json: str | None = None  # JSON text of the schema default, if any
    lenience: tuple[Lenience, ...] = ()
    tag: bool = False  # a discriminator field fixed by the variant
    unstable: bool = False

    @property
    def default(self) -> Any:
        """The schema default as a Python value (None when there is none)."""
        return None if self.default_json is None else json.loads(self.default_json)

    @property
    def nullable(self) -> bool:
        """Whether `null` is an accepted value."""
        return _accepts_null(self.type)


def _accepts_null(expr: TypeExpr) -> bool:
    if isinstance(expr, Scalar):
        return expr.kind in ("none", "any")
    if isinstance(expr, Const):
        return expr.value is None
    if isinstance(expr, UnionOf):
        return any(_accepts_null(o) for o in expr.options)
    return False


@dataclass(frozen=True)
class Struct:
    """A JSON object with known properties: becomes one model class."""

    name: str
    description: str | None
    fields: tuple[Field, ...]
    pointer: str
    base: str | None = None  # Python name of the struct this one extends
    extra: Literal["allow", "forbid"] = "allow"
    def_name: str | None = None  # the `$defs` key this struct stands for, if any
    role: Literal["plain", "variant", "unknown", "base"] = "plain"
    unstable: bool = False
    kind: Literal["struct"] = "struct"


@dataclass(frozen=True)
class Variant:
    """One member of a tagged union: a tag value and the definition it selects."""

    tag: str | None  # None for the "no tag / null tag" variant
    target: str  # Python name of the struct or nested union
    description: str | None


@dataclass(frozen=True)
class TaggedUnion:
    """A union selected by one string property (the tag), possibly open to unknown tags."""

    name: str
    tag_wire: str
    tag_py: str
    variants: tuple[Variant, ...]
    unknown: str | None  # struct that keeps unknown variants (None: closed union)
    description: str | None
    pointer: str
    tag_enum: str | None = None  # open-enum wrapper for the tag values
    def_name: str | None = None
    lenient_tag: bool = False  # a malformed tag is treated as absent
    kind: Literal["union"] = "union"

    @property
    def known_tags(self) -> tuple[str, ...]:
        """Known tag values in schema order."""
        return tuple(v.tag for v in self.variants if v.tag is not None)

    @property
    def none_variant(self) -> Variant | None:
        """The variant chosen when the tag is absent or null, if the union has one."""
        return next((v for v in self.variants if v.tag is None), None)


@dataclass(frozen=True)
class EnumValue:
    """A known value of an enum with its constant name and documentation."""

    value: str
    const_name: str
    description: str | None


@dataclass(frozen=True)
class Enum:
    """A string enum; `open` ones accept any string and keep it."""

    name: str
    values: tuple[EnumValue, ...]
    open: bool
    description: str | None
    pointer: str
    def_name: str | None = None
    kind: Literal["enum"] = "enum"


@dataclass(frozen=True)
class Alias:
    """A named type that is not a class: a scalar, array, map or untagged union."""

    name: str
    type: TypeExpr
    description: str | None
    pointer: str
    def_name: str | None = None
    apart: bool = False  # evaluated apart from the types using it (arrays nested very deep)
    kind: Literal["alias"] = "alias"


Definition = Struct | TaggedUnion | Enum | Alias

Side = Literal["agent", "client", "protocol", "proxy"]


@dataclass(frozen=True)
class Method:
    """A wire method: who handles it, whether it is a request, and its params/result types."""

    wire_name: str
    side: Side  # the side that receives and handles it (x-side)
    kind: Literal["request", "notification"]
    params: str | None  # Python name of the params definition
    result: str | None  # Python name of the result definition (requests only)
    handler: str  # Python method name on the handler class
    description: str | None
    unstable: bool = False


@dataclass(frozen=True)
class Protocol:
    """The whole IR of one schema revision."""

    title: str
    source: str
    sha256: str
    definitions: tuple[Definition, ...]
    methods: tuple[Method, ...]
    roots: tuple[tuple[str, str], ...] = field(default=())  # (root message def, sender side)
    warnings: tuple[str, ...] = ()

    _by_name: dict[str, Definition] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update((d.name, d) for d in self.definitions)

    def get(self, name: str) -> Definition | None:
        """Look up a definition by Python name."""
        return self._by_name.get(name)

    def by_def_name(self, def_name: str) -> Definition | None:
        """Look up the definition that stands for a `$defs` key."""
        return next((d for d in self.definitions if d.def_name == def_name), None)

    def methods_for(self, side: Side) -> tuple[Method, ...]:
        """Methods handled by one side, in wire-name order."""
        return tuple(m for m in self.methods if m.side == side)
