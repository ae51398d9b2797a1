"""The extensibility rules a sender must meet, derived from the IR: walks a message's params or
result along its definition and reports

- `custom-root-field`: a key a spec struct does not define (custom data belongs under `_meta`);
  keys are free where the schema says so (`additionalProperties` given explicitly, maps, free-form
  objects) and inside a custom or future variant (the fallback of an open union);
- `open-enum-custom-value`: an open enum value that is neither known nor `_`-prefixed;
- `open-union-custom-tag`: an open tagged union's tag that is neither known nor `_`-prefixed.

A few unions and enums have a rule of their own on a spec page (`catalog.SPECIFIC_EXTENSION_RULES`:
stop reasons, compaction statuses, authentication method types); those findings carry that ID.
Values the schema rejects anyway are left to `schema-invalid`: the walk only follows what fits.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from acp_codegen.ir.nodes import (
    Alias,
    ArrayOf,
    Enum,
    MapOf,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)
from acp_codegen.transcript.catalog import SPECIFIC_EXTENSION_RULES, SPECIFIC_TAG_RULES
from acp_codegen.transcript.schema import Problem, Revision, pointer

MAX_WALK_DEPTH = 64


class ExtensionRules:
    """The walker for one revision (struct field sets are computed once per struct)."""

    def __init__(self, revision: Revision) -> None:
        self.revision = revision
        self._fields: dict[str, dict[str, TypeExpr]] = {}

    def check(self, python_name: str, value: Any) -> list[Problem]:
        """Every extension-rule problem of `value` read as the definition `python_name`."""
        return list(self._ref(python_name, value, (), 0))

    def _fields_of(self, struct: Struct) -> dict[str, TypeExpr]:
        known = self._fields.get(struct.name)
        if known is None:
            known, current = {}, struct
            while True:
                known.update(
                    (f.wire_name, f.type) for f in current.fields if f.wire_name not in known
                )
                base = self.revision.protocol.get(current.base) if current.base else None
                if not isinstance(base, Struct):
                    break
                current = base
            self._fields[struct.name] = known
        return known

    def _open_struct(self, struct: Struct) -> bool:
        if struct.role == "unknown":
            return True
        raw = self.revision.defs.get(struct.def_name or "", {})
        return isinstance(raw, dict) and raw.get("additionalProperties", False) is not False

    def _ref(self, name: str, value: Any, path: tuple[Any, ...], depth: int) -> Iterator[Problem]:
        definition = self.revision.protocol.get(name)
        if definition is None or depth > MAX_WALK_DEPTH:
            return
        if isinstance(definition, Struct):
            yield from self._struct(definition, value, path, depth)
        elif isinstance(definition, TaggedUnion):
            yield from self._union(definition, value, path, depth)
        elif isinstance(definition, Enum):
            if (
                definition.open
                and isinstance(value, str)
                and not value.startswith("_")
                and value not in {v.value for v in definition.values}
            ):
                rule = SPECIFIC_EXTENSION_RULES.get(
                    definition.def_name or definition.name, "open-enum-custom-value"
                )
                yield Problem(
                    pointer(path),
                    f"{definition.name} value {value!r} is neither known nor `_`-prefixed",
                    rule,
                )
        elif isinstance(definition, Alias):
            yield from self._expr(definition.type, value, path, depth)

    def _struct(
        self, struct: Struct, value: Any, path: tuple[Any, ...], depth: int
    ) -> Iterator[Problem]:
        if not isinstance(value, dict):
            return
        fields = self._fields_of(struct)
        open_struct = self._open_struct(struct)
        for key, item in value.items():
            expr = fields.get(key)
            if expr is not None:
                if key != "_meta":
                    yield from self._expr(expr, item, path + (key,), depth + 1)
            elif not open_struct:
                yield Problem(
                    pointer(path + (key,)),
                    f"{struct.def_name or struct.name} defines no field {key!r} "
                    "(custom data belongs under `_meta`)",
                    "custom-root-field",
                )

    def _union(
        self, union: TaggedUnion, value: Any, path: tuple[Any, ...], depth: int
    ) -> Iterator[Problem]:
        if not isinstance(value, dict):
            return
        tag = value.get(union.tag_wire)
        variant = (
            next((v for v in union.variants if v.tag == tag), None)
            if isinstance(tag, str)
            else union.none_variant
        )
        if variant is not None:
            yield from self._ref(variant.target, value, path, depth)
        elif isinstance(tag, str) and union.unknown is not None and not tag.startswith("_"):
            rule = SPECIFIC_EXTENSION_RULES.get(
                union.def_name or union.name
            ) or SPECIFIC_TAG_RULES.get(union.tag_wire, "open-union-custom-tag")
            yield Problem(
                pointer(path + (union.tag_wire,)),
                (
                    f"{union.def_name or union.name} {union.tag_wire} {tag!r} is neither known "
                    "nor `_`-prefixed"
                ),
                rule,
            )

    def _expr(
        self, expr: TypeExpr, value: Any, path: tuple[Any, ...], depth: int
    ) -> Iterator[Problem]:
        if isinstance(expr, Ref):
            yield from self._ref(expr.name, value, path, depth)
        elif isinstance(expr, ArrayOf) and isinstance(value, list):
            for index, item in enumerate(value):
                yield from self._expr(expr.item, item, path + (index,), depth + 1)
        elif isinstance(expr, MapOf) and isinstance(value, dict):
            for key, item in value.items():
                yield from self._expr(expr.value, item, path + (key,), depth + 1)
        elif isinstance(expr, UnionOf):
            option = self._option(expr, value)
            if option is not None:
                yield from self._expr(option, value, path, depth)

    def _option(self, union: UnionOf, value: Any) -> TypeExpr | None:
        """The option of an untagged union `value` is meant for: one of its JSON type, and among
        several structs the one whose fields cover most of the value's keys."""
        fitting = [o for o in union.options if self._fits(o, value)]
        if len(fitting) <= 1 or not isinstance(value, dict):
            return fitting[0] if fitting else None

        def score(option: TypeExpr) -> int:
            definition = (
                self.revision.protocol.get(option.name) if isinstance(option, Ref) else None
            )
            if isinstance(definition, Struct):
                return len(set(value) & set(self._fields_of(definition)))
            return 0

        return max(fitting, key=score)

    def _fits(self, expr: TypeExpr, value: Any) -> bool:
        if isinstance(expr, Scalar):
            return False  # nothing to walk into
        if isinstance(expr, Ref):
            definition = self.revision.protocol.get(expr.name)
            if isinstance(definition, Alias):
                return self._fits(definition.type, value)
            if isinstance(definition, Enum):
                return isinstance(value, str)
            return isinstance(value, dict)
        if isinstance(expr, ArrayOf):
            return isinstance(value, list)
        if isinstance(expr, MapOf):
            return isinstance(value, dict)
        if isinstance(expr, UnionOf):
            return any(self._fits(o, value) for o in expr.options)
        return False
