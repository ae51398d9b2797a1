"""How long a chain of model classes, each naming the next, one module can hold (`chain_bound`).

A generated class used first builds the classes it names inside its own build, one level of
pydantic's schema generator per link; `acp_codegen/runtime/_deferred.py` walks the chain below a
class to build long ones in steps. That walk costs a first message several milliseconds, so the
module states an upper bound of the longest chain, decided here from the IR, and the runtime
walks only when the bound reaches its step. The bound: classes that name each other (a strongly
connected component) count as a chain through all of them; between components, the longest path.
"""

from __future__ import annotations

from acp_codegen.ir.nodes import Definition, Struct
from acp_codegen.ir.order import eager_deps, type_refs


def named(d: Definition) -> set[str]:
    """The definitions `d` names directly: what it needs at import, and a struct's field types."""
    fields = [name for f in d.fields for name in type_refs(f.type)] if isinstance(d, Struct) else []
    return eager_deps(d).union(fields)


def _class_edges(definitions: tuple[Definition, ...]) -> dict[str, list[str]]:
    """Struct -> the structs it names, through any aliases and unions (iterative, sorted)."""
    by_name = {d.name: d for d in definitions}
    edges: dict[str, list[str]] = {}
    for d in definitions:
        if not isinstance(d, Struct):
            continue
        found: set[str] = set()
        seen: set[str] = set()
        stack = list(named(d))
        while stack:
            name = stack.pop()
            target = by_name.get(name)
            if name in seen or target is None:
                continue
            seen.add(name)
            if isinstance(target, Struct):
                found.add(name)
            else:
                stack.extend(named(target))
        found.discard(d.name)
        edges[d.name] = sorted(found)
    return edges


def components(edges: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components, dependencies first (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            children = edges[node]
            if i < len(children):
                work.append((node, i + 1))
                child = children[i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            for child in children:
                if child in on_stack:
                    low[node] = min(low[node], low[child])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
    return out


def chain_bound(definitions: tuple[Definition, ...]) -> int:
    """An upper bound of the links in any chain of classes of the module (0: none name another)."""
    edges = _class_edges(definitions)
    # the classes on the longest chain from each class down, itself included
    longest: dict[str, int] = {}
    for component in components(edges):
        members = set(component)
        below = max(
            (longest[c] for m in component for c in edges[m] if c not in members), default=0
        )
        for m in component:
            longest[m] = below + len(component)
    return max(longest.values(), default=1) - 1
