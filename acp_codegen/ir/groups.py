"""Model groups: which module of a package's `_models` holds each struct, union and alias.

Importing a model class costs its pydantic class statement (a third of a millisecond), so the
models are spread over modules that load the first time one of their names is asked of the
`models` facade: a message of one method loads the classes it can hold and few others.

A group is a root definition and every definition that only the group uses: walking from the
definitions nothing names down to what they name, a definition joins the group of its users when
they are all in one group, and starts a group of its own otherwise (a definition two groups
share, one nothing names, or an entry: the params or result of a method, which a message of that
method needs without the rest of the union that names it). Every way into a group from outside
enters at its root, so the groups name each other without a cycle: a module imports the names it
uses from the groups below it, and loading one loads exactly what its classes can need. Aliases
that name no definition (`SessionId = StrictStr`) cost nothing to load and would each be a group
of their own: they share one module, `SCALARS`. The definitions nothing names (and no method
sends), with what only they use, are part of no message: they share one module too,
`STANDALONE` (a user who asks for one loads them all). Enums live in `enums.py` and are not
grouped.

A request's params and its result, each the root of a group of its own, share one group: a
method's module, named after the method (`session/prompt` -> `session_prompt`), since answering a
request needs its result class as surely as receiving it needs its params class. (Not when one
group reaches the other through a third: that would be an import cycle.)

A group's module is otherwise named after its root in snake case (`UpdateSessionNotification` ->
`update_session_notification`; past 64 characters cut, with a digest of the root's name); a Python
keyword, a Windows device name (`con`, `aux`...) or a name taken by an earlier root (in name order)
gets a `_` suffix. Names are lower case, so they differ on a file system that ignores case too.
Every order here is by name, so the groups never depend on hash seeds or the schema's key order.
"""

from __future__ import annotations

import hashlib
import keyword
from collections.abc import Mapping
from dataclasses import dataclass

from acp_codegen.ir import naming
from acp_codegen.ir.chains import components, named
from acp_codegen.ir.naming import snake
from acp_codegen.ir.nodes import Alias, Definition, Enum, Protocol, Struct
from acp_codegen.ir.order import type_refs

SCALARS = "scalars"  # the module of the aliases that name no definition
STANDALONE = "standalone"  # the module of the definitions nothing names
_NAME_MAX = 64  # characters of a module name: file systems limit a name to 255 bytes
# Names Windows reserves for devices, whatever the extension (`con.py` cannot be created there).
_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)


@dataclass(frozen=True)
class ModelGroup:
    """One module of `_models`: its definitions and what it imports from the other groups."""

    module: str
    root: str | None  # the definition the group is named after (None: `SCALARS`, `STANDALONE`)
    names: frozenset[str]
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # (group module, names), both sorted
    method: tuple[str, str, str] | None = None  # (wire name, params, result) of a method's group


def _edges(definitions: Mapping[str, Definition]) -> dict[str, list[str]]:
    """Definition -> the grouped definitions it names (itself excluded), sorted.

    A struct also names what the fields of its bases name: pydantic evaluates inherited
    annotations again in the namespace of the subclass's module.
    """
    edges: dict[str, list[str]] = {}
    for name, d in definitions.items():
        found = set(named(d))
        base = d.base if isinstance(d, Struct) else None
        while base is not None and isinstance(definitions.get(base), Struct):
            parent = definitions[base]
            assert isinstance(parent, Struct)
            found.update(ref for f in parent.fields for ref in type_refs(f.type))
            base = parent.base
        edges[name] = sorted(n for n in found if n in definitions and n != name)
    return edges


def _is_scalar(d: Definition) -> bool:
    return isinstance(d, Alias) and next(iter(type_refs(d.type)), None) is None


def _roots(
    definitions: Mapping[str, Definition], edges: Mapping[str, list[str]], entries: frozenset[str]
) -> dict[str, str]:
    """Definition -> the root of its group (`SCALARS` for the scalar aliases, `STANDALONE` for
    the definitions nothing names and what only they use).

    Definitions that name each other (a strongly connected component) share a group: its root
    is the first of its entries by name, else its first member.
    """
    users: dict[str, set[str]] = {name: set() for name in definitions}
    for name, targets in edges.items():
        for target in targets:
            users[target].add(name)
    root: dict[str, str] = {}
    for component in reversed(components(dict(edges))):  # users before what they name
        members = set(component)
        if len(component) == 1 and _is_scalar(definitions[component[0]]):
            root[component[0]] = SCALARS
            continue
        groups = {root[user] for m in component for user in users[m] if user not in members}
        joins = len(groups) == 1 and SCALARS not in groups and not members & entries
        first = (
            STANDALONE
            if not groups and not members & entries
            else min(members & entries or members)
        )
        for m in component:
            root[m] = next(iter(groups)) if joins else first
    return root


def _method_groups(
    protocol: Protocol, root: dict[str, str], edges: Mapping[str, list[str]]
) -> dict[str, tuple[str, str, str]]:
    """Merge each request's result group into its params group (see the module docstring);
    return the merged roots' methods: (wire name, params, result)."""
    results: dict[str, int] = {}
    for m in protocol.methods:
        if m.result:
            results[m.result] = results.get(m.result, 0) + 1
    names: dict[str, tuple[str, str, str]] = {}
    for m in protocol.methods:
        params, result = m.params, m.result
        if not params or not result or params == result or results[result] > 1:
            continue
        if root.get(params) != params or root.get(result) != result or params in names:
            continue
        graph = _group_graph(root, edges)
        if _reaches(graph, params, result) or _reaches(graph, result, params):
            continue
        for name, r in root.items():
            if r == result:
                root[name] = params
        names[params] = (m.wire_name, params, result)
    return names


def _group_graph(root: Mapping[str, str], edges: Mapping[str, list[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, targets in edges.items():
        for target in targets:
            if root[target] != root[name]:
                graph.setdefault(root[name], set()).add(root[target])
    return graph


def _reaches(graph: Mapping[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _module_name(root: str, base: str | None = None) -> str:
    """`base`, else `root` in snake case, at most `_NAME_MAX` characters (longer: cut, and a
    digest of the root's name)."""
    module = base or snake(root)
    if len(module) > _NAME_MAX:
        digest = hashlib.sha256(root.encode("utf-8")).hexdigest()[:8]
        module = f"{module[: _NAME_MAX - 9].rstrip('_')}_{digest}"
    return module


def _module_names(roots: list[str], bases: Mapping[str, str] | None = None) -> dict[str, str]:
    """Root -> its module name (unique, not a keyword, a device name of Windows or `SCALARS`);
    `bases`: the names some roots' modules start from (a method's)."""
    taken = {SCALARS, STANDALONE}
    out: dict[str, str] = {}
    for root in sorted(roots):
        module = _module_name(root, (bases or {}).get(root))
        while keyword.iskeyword(module) or module in taken or module in _DEVICE_NAMES:
            module += "_"
        taken.add(module)
        out[root] = module
    return out


def model_groups(protocol: Protocol) -> tuple[ModelGroup, ...]:
    """The groups of a schema's models, by module name."""
    grouped = {d.name: d for d in protocol.definitions if not isinstance(d, Enum)}
    entries = frozenset(n for m in protocol.methods for n in (m.params, m.result) if n)
    edges = _edges(grouped)
    root = _roots(grouped, edges, entries)
    methods = _method_groups(protocol, root, edges)
    bases = {r: snake(naming.handler_name(wire)) for r, (wire, _, _) in methods.items()}
    modules = _module_names(
        [r for r in set(root.values()) if r not in (SCALARS, STANDALONE)], bases
    )
    roots = {module: r for r, module in modules.items()}
    modules[SCALARS] = SCALARS
    modules[STANDALONE] = STANDALONE
    module_of = {name: modules[r] for name, r in root.items()}
    members: dict[str, set[str]] = {}
    imports: dict[str, dict[str, set[str]]] = {}
    for name, module in module_of.items():
        members.setdefault(module, set()).add(name)
        for target in edges[name]:
            if module_of[target] != module:
                imports.setdefault(module, {}).setdefault(module_of[target], set()).add(target)
    return tuple(
        ModelGroup(
            module,
            roots.get(module),
            frozenset(members[module]),
            tuple((m, tuple(sorted(ns))) for m, ns in sorted(imports.get(module, {}).items())),
            methods.get(roots.get(module, "")),
        )
        for module in sorted(members)
    )


def module_of(groups: tuple[ModelGroup, ...]) -> dict[str, str]:
    """Definition name -> the module of its group."""
    return {name: g.module for g in groups for name in g.names}
