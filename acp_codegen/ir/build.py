"""IR builder: turns a resolved ACP schema into a `Protocol` (definitions, methods, order).

Owns the classification of every `$defs` entry (enum, tagged union, struct, alias), the
hoisting of union variants into named structs (`<Union><Tag>`, `<Union>Unknown`), nested
unions (a variant whose payload is itself a tagged union), leniency hints, and the final
ordering. Method tables come from `acp_codegen.ir.methods`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any

from acp_codegen.errors import fail, pointer_join
from acp_codegen.ir import naming
from acp_codegen.ir.methods import build_methods
from acp_codegen.ir.nodes import (
    Alias,
    Const,
    Definition,
    Enum,
    EnumValue,
    Field,
    Lenience,
    Protocol,
    Ref,
    Scalar,
    Struct,
    TypeExpr,
    UnionOf,
)
from acp_codegen.ir.order import evaluated_apart, order_definitions
from acp_codegen.ir.shapes import DOC_KEYS, EnumShape, enum_shape, options_of, union_shape
from acp_codegen.ir.types import is_object_schema, type_of
from acp_codegen.ir.unions import build_union
from acp_codegen.resolve import ResolvedSchema, ref_name

LENIENCE_KEYS: dict[str, Lenience] = {
    "x-deserialize-default-on-error": "default_on_error",
    "x-deserialize-default-on-null": "default_on_null",
    "x-deserialize-skip-invalid-items": "skip_invalid_items",
}
UNSTABLE_MARK = "**UNSTABLE**"


def is_unstable(description: str | None) -> bool:
    """Whether a description carries the schema's UNSTABLE marker."""
    return bool(description) and UNSTABLE_MARK in (description or "")


class Builder:
    """Stateful walk over one schema; `build()` returns the finished Protocol."""

    def __init__(self, resolved: ResolvedSchema) -> None:
        self.resolved = resolved
        self.defs = resolved.defs
        self.out: dict[str, Definition] = {}
        self.def_names: dict[str, str] = {}
        self.in_progress: set[str] = set()
        self.queued: list[str] = []  # referenced by name, built after the definition being built
        self.queued_inline: list[tuple[str, dict[str, Any], str]] = []  # (name, schema, pointer)
        self.queued_names: set[str] = set()
        self.warnings: list[str] = []
        self.reserved = (
            {naming.class_name(k) for k in self.defs}
            | naming.RESERVED_CLASS_NAMES
            | naming.PYTHON_CLASS_NAMES
        )

    @property
    def label(self) -> str:
        """The schema's file name, for diagnostics."""
        return self.resolved.label

    # -- entry points -------------------------------------------------------------------------
    def build(self) -> Protocol:
        """Build every definition and method."""
        for key in self.defs:
            self._build_key(key)
            while self.queued or self.queued_inline:  # a loop, not recursion: chains of any length
                if self.queued_inline:
                    self._build_named(*self.queued_inline.pop(), None)
                else:
                    self._build_key(self.queued.pop())
        methods, roots = build_methods(self.resolved, self.def_names, self.out)
        doc = self.resolved.loaded.document
        definitions = evaluated_apart(order_definitions(self.out))
        return Protocol(
            title=str(doc.get("title", "")),
            source=self.resolved.loaded.source,
            sha256=self.resolved.loaded.sha256,
            definitions=definitions,
            methods=methods,
            roots=roots,
            warnings=tuple(self.warnings),
        )

    def def_ref(self, def_key: str) -> str:
        """Python name for a `$defs` key; the definition is built later (a reference needs only
        the name, and building it here would nest once per link of a reference chain)."""
        if def_key not in self.def_names and def_key not in self.in_progress:
            self.queued.append(def_key)
        return naming.class_name(def_key)

    def built(self, def_key: str) -> Definition | None:
        """The definition for a `$defs` key, built now if it is not yet (None while it is being
        built: a definition that extends itself)."""
        self._build_key(def_key)
        return self.out.get(naming.class_name(def_key))

    def _build_key(self, def_key: str) -> None:
        if def_key in self.def_names or def_key in self.in_progress:
            return
        for key in _prerequisites(def_key, self.defs, self.def_names.keys() | self.in_progress):
            self._build_one(key)
        self._build_one(def_key)

    def _build_one(self, def_key: str) -> None:
        if def_key in self.def_names or def_key in self.in_progress:
            return
        name = naming.class_name(def_key)
        self.in_progress.add(def_key)
        self.def_names[def_key] = name
        self._build_named(name, self.defs[def_key], pointer_join("/$defs", def_key), def_key)
        self.in_progress.discard(def_key)

    def hoist(self, name: str, schema: dict[str, Any], pointer: str) -> str:
        """Name and build an inline object/union schema."""
        name = self._fresh(name)
        self._build_named(name, schema, pointer, None)
        return name

    def hoist_later(self, name: str, schema: dict[str, Any], pointer: str) -> str:
        """Name an inline schema now and build it after the current definition (for nesting
        that would otherwise be as deep as the schema)."""
        name = self._fresh(name)
        self.queued_names.add(name)
        self.queued_inline.append((name, schema, pointer))
        return name

    # -- classification -----------------------------------------------------------------------
    def _build_named(self, name: str, schema: Any, pointer: str, def_key: str | None) -> None:
        if not isinstance(schema, dict):
            self._add(Alias(name, Scalar("any"), None, pointer, def_key))
            return
        description = schema.get("description")
        enum = enum_shape(schema)
        if enum is not None:
            self._add(self._enum(name, enum, description, pointer, def_key))
            return
        shape = union_shape(schema)
        if shape is not None:
            build_union(self, name, schema, shape, pointer, def_key)
            return
        if is_object_schema(schema) or (schema.get("type") == "object" and "allOf" in schema):
            self._object(name, schema, pointer, def_key=def_key)
            return
        self._add(Alias(name, type_of(schema, self, name, pointer), description, pointer, def_key))

    def _enum(
        self,
        name: str,
        shape: EnumShape,
        description: str | None,
        pointer: str,
        def_key: str | None,
    ) -> Enum:
        values = tuple(EnumValue(v, naming.constant(v), d) for v, d in shape.values)
        return Enum(name, values, shape.open, description, pointer, def_key)

    # -- structs ------------------------------------------------------------------------------
    def _object(
        self,
        name: str,
        schema: dict[str, Any],
        pointer: str,
        *,
        def_key: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Add the struct for an object schema, or, when the object is combined with alternatives
        (`oneOf`/`anyOf` of objects that is not a tagged union, in the schema itself or in a
        definition it extends), one struct per alternative (`<name><Alternative>`) and `name` as
        the union of them."""
        alternatives = self._alternatives(schema, pointer)
        exclusive = self._exclusive(schema)
        if not alternatives:
            self._add(self._struct(name, schema, pointer, def_key=def_key, **kwargs))
            return
        members: list[TypeExpr] = []
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        for suffix, parts, alt_pointer in alternatives:
            member = self._fresh(name + suffix)
            merged = {
                **rest,
                "allOf": [
                    *(
                        p
                        for p in rest.get("allOf") or ()
                        if not _extends_alternatives(p, self.defs)
                    ),
                    *parts,
                ],
            }
            struct = self._struct(member, merged, alt_pointer, **kwargs)
            self._add(replace(struct, description=struct.description or schema.get("description")))
            members.append(Ref(member))
        self._add(
            Alias(
                name,
                UnionOf(tuple(members), exclusive),
                schema.get("description"),
                pointer,
                def_key,
            )
        )

    def _exclusive(self, schema: dict[str, Any]) -> bool:
        """Whether a struct's alternatives come from a `oneOf` (here or in the definition it
        extends)."""
        if "oneOf" in schema or "anyOf" in schema:
            return "oneOf" in schema
        for part in schema.get("allOf") or ():
            if _extends_alternatives(part, self.defs):
                return "oneOf" in self.defs[ref_name(part["$ref"])]
        return False

    def _alternatives(
        self, schema: dict[str, Any], pointer: str
    ) -> list[tuple[str, list[Any], str]] | None:
        """(name suffix, `allOf` parts, pointer) of each object alternative of a struct schema."""
        options = options_of(schema)
        if options is not None:
            if union_shape(schema) is not None or enum_shape(schema) is not None:
                return None
            key = "anyOf" if "anyOf" in schema else "oneOf"
            found: list[tuple[str, list[Any], str]] = []
            for i, option in enumerate(options):
                suffix = _alternative_name(option)
                if suffix is None or not self._objectish(option):
                    return None
                parts = [p for p in option.get("allOf") or ()]
                own = {k: option[k] for k in ("properties", "required") if k in option}
                found.append((suffix, parts + ([own] if own else []), f"{pointer}/{key}/{i}"))
            names = [f[0] for f in found]
            return found if len(set(names)) == len(names) else None
        for part in schema.get("allOf") or ():
            if isinstance(part, dict) and isinstance(part.get("$ref"), str):
                key = ref_name(part["$ref"])
                target = self.defs.get(key)
                if isinstance(target, dict) and _extends_alternatives(part, self.defs):
                    inner = self._alternatives(target, pointer_join("/$defs", key))
                    if inner:
                        own = {
                            k: v
                            for k, v in target.items()
                            if k not in ("anyOf", "oneOf", "description", "title")
                        }
                        return [(suffix, [own, *parts], p) for suffix, parts, p in inner]
        return None

    def _objectish(self, option: Any) -> bool:
        if not isinstance(option, dict) or union_shape(option) is not None:
            return False
        if is_object_schema(option) or option.get("type") == "object":
            return True
        refs = [p for p in option.get("allOf") or () if isinstance(p, dict) and "$ref" in p]
        return bool(refs) and all(
            isinstance(self.defs.get(ref_name(p["$ref"])), dict)
            and is_object_schema(self.defs[ref_name(p["$ref"])])
            for p in refs
        )

    def _struct(
        self,
        name: str,
        schema: dict[str, Any],
        pointer: str,
        *,
        def_key: str | None = None,
        skip: frozenset[str] = frozenset(),
        role: str = "plain",
        base: str | None = None,
        leading: tuple[Field, ...] = (),
    ) -> Struct:
        fields: list[Field] = list(leading)
        taken = {f.wire_name for f in fields} | set(skip)
        for i, part in enumerate(schema.get("allOf") or ()):
            if not isinstance(part, dict):
                continue
            part_ptr = f"{pointer}/allOf/{i}"
            if "$ref" in part:
                target_key = ref_name(part["$ref"])
                target = self.built(target_key)
                if isinstance(target, Struct) and base is None and not fields:
                    base = target.name
                    taken |= {f.wire_name for f in self._all_fields(target)}
                    continue
                part = self.defs[target_key]
                part_ptr = pointer_join("/$defs", target_key)
            for f in self._fields_of(name, part, part_ptr):
                if f.wire_name not in taken:
                    fields.append(f)
                    taken.add(f.wire_name)
        for f in self._fields_of(name, schema, pointer):
            if f.wire_name not in taken:
                fields.append(f)
                taken.add(f.wire_name)
            elif f.wire_name not in skip and not any(x.wire_name == f.wire_name for x in leading):
                fields = [f if x.wire_name == f.wire_name else x for x in fields]
        for wire, value in _absent_or_const(schema):  # `not` forbidding any other value
            if wire not in taken:
                fields.append(
                    Field(
                        wire,
                        naming.field_name(wire),
                        Const(value),
                        False,
                        None,
                        pointer_join(pointer, "not"),
                    )
                )
                taken.add(wire)
        fields = self._distinct_names(fields, base)
        extra = schema.get("additionalProperties", schema.get("unevaluatedProperties", True))
        description = schema.get("description")
        return Struct(
            name=name,
            description=description,
            fields=tuple(fields),
            pointer=pointer,
            base=base,
            extra="forbid" if extra is False else "allow",
            def_name=def_key,
            role=role,  # type: ignore[arg-type]
            unstable=is_unstable(description),
        )

    def _distinct_names(self, fields: list[Field], base: str | None) -> list[Field]:
        """The fields with distinct Python names, none taken from the base's fields."""
        parent = self.out.get(base) if base else None
        inherited = (
            {f.py_name for f in self._all_fields(parent)} if isinstance(parent, Struct) else set()
        )
        names = naming.distinct_field_names(
            [f.wire_name for f in fields], inherited, {f.wire_name for f in fields if f.tag}
        )
        return [
            f if f.py_name == names[f.wire_name] else replace(f, py_name=names[f.wire_name])
            for f in fields
        ]

    def _all_fields(self, struct: Struct) -> list[Field]:
        """Inherited fields (the root base's first), then the struct's own."""
        chain: list[Struct] = []
        names: set[str] = set()
        current: Definition | None = struct
        while isinstance(current, Struct) and current.name not in names:
            chain.append(current)
            names.add(current.name)
            current = self.out.get(current.base) if current.base else None
        return [f for s in reversed(chain) for f in s.fields]

    def _fields_of(self, owner: str, schema: dict[str, Any], pointer: str) -> list[Field]:
        props = schema.get("properties")
        if not isinstance(props, dict):
            return []
        required = set(schema.get("required") or ())
        return [
            self._field(
                owner, wire, prop, wire in required, pointer_join(pointer, "properties", wire)
            )
            for wire, prop in props.items()
        ]

    def _field(self, owner: str, wire: str, prop: Any, required: bool, pointer: str) -> Field:
        prop = prop if isinstance(prop, dict) else {}
        lenience: list[Lenience] = []
        for key, value in prop.items():
            if key in LENIENCE_KEYS and value:
                lenience.append(LENIENCE_KEYS[key])
            elif key.startswith("x-deserialize-") and key not in LENIENCE_KEYS:
                self.warnings.append(
                    f"{self.resolved.label}#{pointer}: unknown leniency hint {key!r} ignored"
                )
        description = prop.get("description")
        return Field(
            wire_name=wire,
            py_name=naming.field_name(wire),
            type=type_of(prop, self, owner + naming.pascal(wire), pointer),
            required=required,
            description=description,
            pointer=pointer,
            default_json=json.dumps(prop["default"], sort_keys=True) if "default" in prop else None,
            lenience=tuple(sorted(set(lenience))),
            unstable=is_unstable(description),
        )

    # -- bookkeeping --------------------------------------------------------------------------
    def _fresh(self, name: str) -> str:
        """A hoisted name: never a `$defs` class name, never one already built."""
        candidate = name
        while candidate in self.out or candidate in self.reserved or candidate in self.queued_names:
            candidate += "_"
        return candidate

    def _add(self, definition: Definition) -> None:
        if definition.name in self.out:
            raise fail(
                "name-clash",
                f"two definitions named {definition.name!r}",
                file=self.resolved.label,
                pointer=definition.pointer,
            )
        self.out[definition.name] = definition


def _extended(schema: Any) -> list[str]:
    """The definitions a schema extends (`allOf` `$ref`s, its own and its alternatives'): what
    building it needs built first."""
    if not isinstance(schema, dict):
        return []
    parts = [p for p in schema.get("allOf") or () if isinstance(p, dict)]
    for option in options_of(schema) or ():
        if isinstance(option, dict):
            parts.extend(p for p in option.get("allOf") or () if isinstance(p, dict))
    return [ref_name(p["$ref"]) for p in parts if isinstance(p.get("$ref"), str)]


def _prerequisites(def_key: str, defs: Mapping[str, Any], done: AbstractSet[str]) -> list[str]:
    """The definitions `def_key` extends, directly or not, that are not built yet, each after
    those it extends (iterative: inheritance chains of any length; a cycle is cut where it
    closes, as building it would)."""
    out: list[str] = []
    seen = {def_key}
    path: list[tuple[str, Iterator[str]]] = [(def_key, iter(_extended(defs.get(def_key))))]
    while path:
        key, targets = path[-1]
        for target in targets:
            if target not in seen and target not in done and target in defs:
                seen.add(target)
                path.append((target, iter(_extended(defs[target]))))
                break
        else:
            path.pop()
            if key != def_key:
                out.append(key)
    return out


def _absent_or_const(schema: dict[str, Any]) -> list[tuple[str, str | int | bool]]:
    """Properties an object's `not` restricts to one value when present: the schema pattern
    `"not": {"properties": {P: {"not": {"const": V}}}, "required": [P]}` (P absent, or V)."""
    rule = schema.get("not")
    if not isinstance(rule, dict) or set(rule) - DOC_KEYS - {"type", "properties", "required"}:
        return []
    props = rule.get("properties")
    if (
        rule.get("type", "object") != "object"
        or not isinstance(props, dict)
        or rule.get("required") != list(props)
    ):
        return []
    out: list[tuple[str, str | int | bool]] = []
    for wire, sub in props.items():
        inner = sub.get("not") if isinstance(sub, dict) and set(sub) - DOC_KEYS == {"not"} else None
        if not (
            isinstance(inner, dict)
            and set(inner) - DOC_KEYS == {"const"}
            and isinstance(inner["const"], (str, int, bool))
        ):
            return []
        out.append((wire, inner["const"]))
    return out if len(out) == 1 else []


def _alternative_name(option: Any) -> str | None:
    """A position-free name for an alternative: its `title`, else the one definition it extends."""
    if not isinstance(option, dict):
        return None
    title = option.get("title")
    if isinstance(title, str) and title.strip():
        return naming.pascal(title)
    refs = [
        p["$ref"]
        for p in option.get("allOf") or ()
        if isinstance(p, dict) and isinstance(p.get("$ref"), str)
    ]
    return naming.class_name(ref_name(refs[0])) if len(refs) == 1 else None


def _extends_alternatives(part: Any, defs: Mapping[str, Any]) -> bool:
    """An `allOf` part that is a `$ref` to an object definition combined with alternatives."""
    if not (isinstance(part, dict) and isinstance(part.get("$ref"), str)):
        return False
    target = defs.get(ref_name(part["$ref"]))
    return (
        isinstance(target, dict)
        and is_object_schema(target)
        and options_of(target) is not None
        and union_shape(target) is None
        and enum_shape(target) is None
    )


def build_protocol(resolved: ResolvedSchema) -> Protocol:
    """Build the IR of a resolved schema."""
    return Builder(resolved).build()


__all__ = ["DOC_KEYS", "UnionOf", "build_protocol", "is_unstable"]
