"""Method tables: which wire methods exist, who handles them, and their params/result types.

Owns the reading of `x-method` / `x-side` and of the root message definitions
(`AgentRequest`, `ClientNotification`, ...), which say whether a definition is sent as request
params, as a result, or as notification params, and by whom. Also the cross-check against an
upstream `meta*.json` method table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from acp_codegen.errors import CodegenError, Diagnostic
from acp_codegen.ir import naming
from acp_codegen.ir.nodes import Definition, Method, Protocol, Side
from acp_codegen.resolve import ResolvedSchema, ref_name

ROOT_SENDERS = {"Agent": "agent", "Client": "client", "Proxy": "proxy"}
ROOT_KINDS = {"Request": "params", "Notification": "notification", "Response": "result"}


def root_definitions(defs: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """Yield (root def name, sender side, role) for the root message definitions present."""
    for prefix, sender in ROOT_SENDERS.items():
        for suffix, role in ROOT_KINDS.items():
            if prefix + suffix in defs:
                yield prefix + suffix, sender, role


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield ref_name(node["$ref"])
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _role_by_suffix(def_key: str) -> str | None:
    for suffix, role in ROOT_KINDS.items():
        if def_key.endswith(suffix):
            return role
    return None


def build_methods(
    resolved: ResolvedSchema, def_names: Mapping[str, str], built: Mapping[str, Definition]
) -> tuple[tuple[Method, ...], tuple[tuple[str, str], ...]]:
    """Build the method list (sorted by side, then wire name) and the root message list."""
    defs = resolved.defs
    roles: dict[str, str] = {}
    roots: list[tuple[str, str]] = []
    for root, sender, role in root_definitions(defs):
        roots.append((root, sender))
        for key in _refs(defs[root]):
            if "x-method" in defs.get(key, {}):
                roles.setdefault(key, role)
    entries: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key, schema in defs.items():
        if not isinstance(schema, dict) or "x-method" not in schema:
            continue
        wire = schema["x-method"]
        side = schema.get("x-side", "protocol")
        role = roles.get(key) or _role_by_suffix(key) or "params"
        sides: tuple[str, ...] = ("agent", "client") if side == "both" else (side,)
        kind = "notification" if role == "notification" else "request"
        for s in sides:
            entry = entries.setdefault((s, wire, kind), {"description": None})
            slot = "result" if role == "result" else "params"
            entry[slot] = def_names.get(key, naming.class_name(key))
            if slot == "params":
                entry["description"] = schema.get("description")
    methods: list[Method] = []
    for (side, wire, kind), entry in sorted(entries.items()):
        if "params" not in entry and kind == "request":
            continue  # a result with no request: nothing to dispatch
        description: str | None = entry.get("description")
        methods.append(
            Method(
                wire_name=wire,
                side=side,  # type: ignore[arg-type]
                kind=kind,  # type: ignore[arg-type]
                params=entry.get("params"),
                result=entry.get("result") if kind == "request" else None,
                handler=naming.handler_name(wire),
                description=description,
                unstable=description is not None and "**UNSTABLE**" in description,
            )
        )
    return distinct_handlers(methods), tuple(roots)


def distinct_handlers(methods: list[Method]) -> tuple[Method, ...]:
    """The methods with one handler name each per side (a handler class and a peer have one
    method of a name: a second `def` would shadow the first, at run time too).

    A side may handle a wire method both as a request and as a notification (the draft's git
    history has `mcp/message` so): the request keeps the plain name, the notification's handler
    is `<name>_notification`. Any other clash (two wire names with the same snake case) numbers
    the later ones in wire order (`<name>_2`)."""
    names: dict[int, str] = {}
    taken: set[tuple[str, str]] = set()
    clashing = {(m.side, m.handler) for m in methods if m.kind == "request"}
    ranked = sorted(
        range(len(methods)),
        key=lambda i: (methods[i].side, methods[i].kind != "request", methods[i].wire_name),
    )
    for index in ranked:  # requests first: they keep the plain name
        method = methods[index]
        name = method.handler
        if method.kind == "notification" and (method.side, name) in clashing:
            name = f"{name}_notification"
        base, number = name, 1
        while (method.side, name) in taken:
            number += 1
            name = f"{base}_{number}"
        taken.add((method.side, name))
        names[index] = name
    return tuple(
        m if names[i] == m.handler else replace(m, handler=names[i]) for i, m in enumerate(methods)
    )


_META_SIDES: dict[str, Side] = {
    "agentMethods": "agent",
    "clientMethods": "client",
    "protocolMethods": "protocol",
    "proxyMethods": "proxy",
}


def check_meta(protocol: Protocol, meta: Mapping[str, Any], label: str) -> None:
    """Raise CodegenError when an upstream `meta*.json` table disagrees with the schema."""
    problems: list[Diagnostic] = []
    ours = {(m.side, m.wire_name) for m in protocol.methods}
    for table, side in _META_SIDES.items():
        for key, wire in (meta.get(table) or {}).items():
            if (side, wire) not in ours:
                problems.append(
                    Diagnostic(
                        "error",
                        "meta-mismatch",
                        f"{table}.{key} = {wire!r} has no {side}-side method in the schema",
                        label,
                        f"/{table}/{key}",
                    )
                )
    theirs = {
        (side, wire)
        for table, side in _META_SIDES.items()
        for wire in (meta.get(table) or {}).values()
    }
    for side, wire in sorted(ours - theirs):
        if any(t in meta for t, s in _META_SIDES.items() if s == side):
            problems.append(
                Diagnostic(
                    "error",
                    "meta-mismatch",
                    f"schema method {wire!r} (x-side {side}) is missing from the meta table",
                    label,
                    None,
                )
            )
    if problems:
        raise CodegenError(*problems)
