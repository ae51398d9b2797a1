"""Output order of definitions: deterministic, diff-friendly, and importable.

Enums first (they depend on nothing), then structs with every base before the structs that
extend it, then unions and aliases with every union or alias they mention before them (they
are evaluated at import time). Ties break by name, so the order never depends on the schema's
key order or on hash seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from codegen.ir.nodes import (
    Alias,
    ArrayOf,
    Definition,
    Enum,
    MapOf,
    Ref,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)


def type_refs(expr: TypeExpr) -> Iterable[str]:
    """Names of the definitions a type expression mentions."""
    if isinstance(expr, Ref):
        yield expr.name
    elif isinstance(expr, ArrayOf):
        yield from type_refs(expr.item)
    elif isinstance(expr, MapOf):
        yield from type_refs(expr.value)
    elif isinstance(expr, UnionOf):
        for option in expr.options:
            yield from type_refs(option)


def _eager_deps(d: Definition) -> set[str]:
    if isinstance(d, Struct):
        return {d.base} if d.base else set()
    if isinstance(d, TaggedUnion):
        return {v.target for v in d.variants} | ({d.unknown} if d.unknown else set())
    if isinstance(d, Alias):
        return set(type_refs(d.type))
    return set()


def _topological(items: Mapping[str, Definition], group: set[str]) -> list[Definition]:
    done: set[str] = set()
    out: list[Definition] = []

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in done or name not in group or name in stack:
            return
        for dep in sorted(_eager_deps(items[name])):
            visit(dep, (*stack, name))
        done.add(name)
        out.append(items[name])

    for name in sorted(group):
        visit(name, ())
    return out


def order_definitions(defs: Mapping[str, Definition]) -> tuple[Definition, ...]:
    """All definitions in output order."""
    enums = sorted((d for d in defs.values() if isinstance(d, Enum)), key=lambda d: d.name)
    structs = _topological(defs, {n for n, d in defs.items() if isinstance(d, Struct)})
    rest = _topological(defs, {n for n, d in defs.items() if isinstance(d, (TaggedUnion, Alias))})
    return (*enums, *structs, *rest)
