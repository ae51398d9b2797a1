"""Per-revision facts the diff needs: wire paths of definitions and who sends each one.

Owns two derived views of one `Protocol`:
- the *wire path* of every definition, a name that does not depend on Python naming: the
  `$defs` key for named definitions, and for hoisted ones the place they hang off, e.g.
  `ToolCallUpdate.patch`, `AuthMethod[terminal]`, `AuthMethod[*]` (the fallback),
  `AuthMethod(base)`, `AuthMethod#tag` (the open tag enum), `Plan.entries[]`, `Meta.x{}`;
- the *senders* of every definition: the sides whose root messages (`AgentRequest`,
  `ClientNotification`, ...) reach it through struct fields, bases, union variants and aliases.
Definitions are matched across revisions by wire path, so a hoisted class that gets another
Python name is recognised as the same thing (and reported as a generated-code rename).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from acp_codegen.diff.model import callers, handlers
from acp_codegen.ir import naming
from acp_codegen.ir.nodes import (
    Alias,
    ArrayOf,
    Definition,
    Field,
    MapOf,
    Protocol,
    Ref,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)


def type_refs(expr: TypeExpr, loc: str = "") -> Iterator[tuple[str, str]]:
    """Yield (Python name, location suffix) for every reference inside a type expression."""
    if isinstance(expr, Ref):
        yield expr.name, loc
    elif isinstance(expr, ArrayOf):
        yield from type_refs(expr.item, loc + "[]")
    elif isinstance(expr, MapOf):
        yield from type_refs(expr.value, loc + "{}")
    elif isinstance(expr, UnionOf):
        refs = [o for o in expr.options if isinstance(o, (Ref, ArrayOf, MapOf, UnionOf))]
        for i, option in enumerate(refs):
            yield from type_refs(option, loc + (f"|{i}" if len(refs) > 1 else ""))


def children(protocol: Protocol, definition: Definition) -> Iterator[tuple[str, str]]:
    """Yield (Python name, path suffix) for the definitions one definition uses directly."""
    if isinstance(definition, Struct):
        if definition.base is not None:
            yield definition.base, "(base)"
        for f in definition.fields:
            yield from type_refs(f.type, "." + f.wire_name)
        for key in sorted(
            {k for f in definition.fields if (k := copied_from(definition, f)) is not None}
        ):
            yield naming.class_name(key), ""
    elif isinstance(definition, TaggedUnion):
        copied = _def_key(definition.pointer)
        if definition.def_name is None and copied is not None:  # a nested union re-tags a copy
            yield naming.class_name(copied), ""
        for variant in definition.variants:
            target = protocol.get(variant.target)
            if isinstance(target, Struct) and target.base is not None:
                yield target.base, "(base)"
                break
        if definition.tag_enum is not None:
            yield definition.tag_enum, "#tag"
        for variant in definition.variants:
            yield variant.target, f"[{variant_key(variant.tag)}]"
        if definition.unknown is not None:
            yield definition.unknown, "[*]"
    elif isinstance(definition, Alias):
        yield from type_refs(definition.type)


def copied_from(struct: Struct, f: Field) -> str | None:
    """The `$defs` key a field was copied from (`allOf: [{$ref}]` flattened into the struct)."""
    declared = f.pointer.rsplit("/properties/", 1)[0]
    key = _def_key(declared) if declared != struct.pointer else None
    return None if key == struct.def_name else key


def _def_key(pointer: str) -> str | None:
    """The `$defs` key of a pointer that is exactly `/$defs/<key>`."""
    if not pointer.startswith("/$defs/") or pointer.count("/") != 2:
        return None
    return pointer[len("/$defs/") :].replace("~1", "/").replace("~0", "~")


def variant_key(tag: str | None) -> str:
    """How a variant tag appears in a path (`null` for the absent/null-tag variant)."""
    return "null" if tag is None else tag


@dataclass
class Facts:
    """Wire paths and senders of every definition of one revision."""

    protocol: Protocol
    paths: dict[str, str] = field(default_factory=dict)  # Python name -> wire path
    by_path: dict[str, Definition] = field(default_factory=dict)
    senders: dict[str, frozenset[str]] = field(default_factory=dict)  # Python name -> sides
    roots: frozenset[str] = frozenset()  # Python names of the root message definitions

    def path(self, name: str) -> str:
        """The wire path of a definition (its Python name prefixed `~` if it has none)."""
        return self.paths.get(name, "~" + name)

    def at(self, path: str) -> Definition | None:
        """The definition at a wire path."""
        return self.by_path.get(path)

    def senders_at(self, path: str) -> frozenset[str]:
        """Sides that send the definition at a wire path."""
        definition = self.by_path.get(path)
        return frozenset() if definition is None else self.senders.get(definition.name, frozenset())

    def in_envelope(self, path: str) -> bool:
        """Whether a path is a root message (or hangs off one): those are compared as methods."""
        prefixes = tuple(r + sep for r in self.root_paths for sep in ".[(#|")
        return path in self.root_paths or path.startswith(prefixes)

    @property
    def root_paths(self) -> frozenset[str]:
        """Wire paths of the root message definitions."""
        return frozenset(self.path(name) for name in self.roots)


def facts_for(protocol: Protocol) -> Facts:
    """Compute wire paths and senders for one revision."""
    facts = Facts(protocol)
    named = sorted((d for d in protocol.definitions if d.def_name), key=lambda d: d.def_name or "")
    queue: deque[Definition] = deque()
    for definition in named:
        facts.paths[definition.name] = definition.def_name or definition.name
        queue.append(definition)
    while queue:
        definition = queue.popleft()
        base = facts.paths[definition.name]
        for name, suffix in children(protocol, definition):
            child = protocol.get(name)
            if child is not None and name not in facts.paths and child.def_name is None:
                facts.paths[name] = base + suffix
                queue.append(child)
    for definition in protocol.definitions:
        facts.by_path.setdefault(facts.path(definition.name), definition)
    facts.senders = _senders(protocol, facts)
    return facts


def _senders(protocol: Protocol, facts: Facts) -> dict[str, frozenset[str]]:
    edges = {d.name: [n for n, _ in children(protocol, d)] for d in protocol.definitions}
    found: dict[str, set[str]] = {}
    roots: set[str] = set()
    starts: list[tuple[str, tuple[str, ...]]] = []
    for root_def, sender in protocol.roots:
        root = protocol.by_def_name(root_def)
        if root is not None:
            roots.add(root.name)
            starts.append((root.name, handlers(sender)))
    for method in protocol.methods:  # x-side names the handler: params come from the callers
        if method.params is not None:
            starts.append((method.params, callers(method.side)))
        if method.result is not None:
            starts.append((method.result, handlers(method.side)))
    for start, sides in starts:
        seen = {start}
        queue = deque([start])
        while queue:
            name = queue.popleft()
            found.setdefault(name, set()).update(sides)
            for child in edges.get(name, ()):
                if child not in seen and protocol.get(child) is not None:
                    seen.add(child)
                    queue.append(child)
    facts.roots = frozenset(roots)
    return {name: frozenset(sides) for name, sides in found.items()}
