"""Output order of definitions: deterministic, diff-friendly, and importable.

Enums first (they depend on nothing), then structs with every base before the structs that
extend it, then unions and aliases with every union or alias they mention before them (they
are evaluated at import time). Ties break by name, so the order never depends on the schema's
key order or on hash seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from acp_codegen.ir.nodes import (
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


def eager_deps(d: Definition) -> set[str]:
    """The definitions `d` needs defined before it at import (a base; variants; an alias's type)."""
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
        path: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(eager_deps(items[root]))))]
        on_path = {root}
        while path:
            name, deps = path[-1]
            for dep in deps:
                if dep in group and dep not in done and dep not in on_path:
                    path.append((dep, iter(sorted(eager_deps(items[dep])))))
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


# Containers (arrays, maps, unions) one type expression nests, inline or through aliases, before
# the alias at that level is evaluated apart (`Apart[...]`, see `acp_codegen/runtime/_apart.py`):
# Python's typing and pydantic evaluate such a type recursively, a RecursionError past a hundred
# or two.
# Inline nesting is cut into aliases every `types.MAX_NESTED_ARRAYS` levels, so no evaluation
# goes deeper than this plus that. Classes and tagged unions do not count: each is built apart.
APART_STEP = 64


def evaluated_apart(definitions: tuple[Definition, ...]) -> tuple[Definition, ...]:
    """`definitions` (in output order) with `apart` set on every alias that ends a run of more
    than `APART_STEP` nested containers below it; the aliases of ordinary schemas are unchanged.

    An alias comes after the aliases it is evaluated from, so one pass with a memo of each
    alias's depth (counted from the nearest apart alias below it) covers chains of any length.
    """
    alias_depth: dict[str, int] = {}

    def depth(expr: TypeExpr) -> int:
        if isinstance(expr, ArrayOf):
            return 1 + depth(expr.item)
        if isinstance(expr, MapOf):
            return 1 + depth(expr.value)
        if isinstance(expr, UnionOf):
            return 1 + max(depth(o) for o in expr.options)  # one more level of typing's evaluation
        if isinstance(expr, Ref):
            return alias_depth.get(expr.name, 0)
        return 0

    out: list[Definition] = []
    for d in definitions:
        if isinstance(d, Alias):
            levels = depth(d.type)
            if levels > APART_STEP:
                d, levels = replace(d, apart=True), 0
            alias_depth[d.name] = levels
        out.append(d)
    return tuple(out)
