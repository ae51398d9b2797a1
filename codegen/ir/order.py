"""Output order of definitions: deterministic, diff-friendly, and importable.

Enums first (they depend on nothing), then structs with every base before the structs that
extend it, then unions and aliases with every union or alias they mention before them (they
are evaluated at import time). Ties break by name, so the order never depends on the schema's
key order or on hash seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

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
    """Names of the definitions a type expression mentions (left to right; iterative)."""
    stack: list[TypeExpr] = [expr]
    while stack:
        current = stack.pop()
        if isinstance(current, Ref):
            yield current.name
        elif isinstance(current, ArrayOf):
            stack.append(current.item)
        elif isinstance(current, MapOf):
            stack.append(current.value)
        elif isinstance(current, UnionOf):
            stack.extend(reversed(current.options))


def _eager_deps(d: Definition) -> set[str]:
    if isinstance(d, Struct):
        return {d.base} if d.base else set()
    if isinstance(d, TaggedUnion):
        return {v.target for v in d.variants} | ({d.unknown} if d.unknown else set())
    if isinstance(d, Alias):
        return set(type_refs(d.type))
    return set()


def _topological(items: Mapping[str, Definition], group: set[str]) -> list[Definition]:
    """Depth-first post-order over eager dependencies, roots and dependencies in name order
    (a dependency already on the path is skipped: a cycle); iterative, so chains of any length."""
    done: set[str] = set()
    out: list[Definition] = []
    for root in sorted(group):
        if root in done:
            continue
        path: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(_eager_deps(items[root]))))]
        on_path = {root}
        while path:
            name, deps = path[-1]
            for dep in deps:
                if dep in group and dep not in done and dep not in on_path:
                    path.append((dep, iter(sorted(_eager_deps(items[dep])))))
                    on_path.add(dep)
                    break
            else:
                path.pop()
                on_path.discard(name)
                done.add(name)
                out.append(items[name])
    return out


def order_definitions(defs: Mapping[str, Definition]) -> tuple[Definition, ...]:
    """All definitions in output order."""
    enums = sorted((d for d in defs.values() if isinstance(d, Enum)), key=lambda d: d.name)
    structs = _topological(defs, {n for n, d in defs.items() if isinstance(d, Struct)})
    rest = _topological(defs, {n for n, d in defs.items() if isinstance(d, (TaggedUnion, Alias))})
    return (*enums, *structs, *rest)


# Containers (arrays, maps) one type may nest, inline or through aliases: Python's typing
# evaluates such a type recursively when the generated module is imported. Classes and tagged
# unions do not count: each is evaluated on its own.
MAX_TYPE_NESTING = 100


def nesting_too_deep(definitions: tuple[Definition, ...]) -> tuple[str, int] | None:
    """(pointer, depth) of the type nesting the most containers, if that is more than
    `MAX_TYPE_NESTING` (the first such in output order on a tie).

    `definitions` is in output order (an alias after the aliases it is evaluated from), so one
    pass over the aliases with a memo covers alias chains of any length; fields come after.
    """
    alias_depth: dict[str, int] = {}

    def depth(expr: TypeExpr) -> int:
        if isinstance(expr, ArrayOf):
            return 1 + depth(expr.item)
        if isinstance(expr, MapOf):
            return 1 + depth(expr.value)
        if isinstance(expr, UnionOf):
            return max(depth(o) for o in expr.options)
        if isinstance(expr, Ref):
            return alias_depth.get(expr.name, 0)
        return 0

    deepest: tuple[str, int] | None = None
    for d in sorted(definitions, key=lambda d: not isinstance(d, Alias)):  # aliases first, in order
        found = [(d.pointer, depth(d.type))] if isinstance(d, Alias) else []
        if isinstance(d, Alias):
            alias_depth[d.name] = found[0][1]
        elif isinstance(d, Struct):
            found = [(f.pointer, depth(f.type)) for f in d.fields]
        for pointer, levels in found:
            if levels > MAX_TYPE_NESTING and (deepest is None or levels > deepest[1]):
                deepest = (pointer, levels)
    return deepest
