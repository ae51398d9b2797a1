"""Dispatch context: what the dispatch template needs, derived from the IR's methods.

Owns the per-side method tables, the typed peer proxies, and the session-update fan-out: a
notification whose params carry one tagged union gets one `on_<tag>` handler per variant.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_codegen.fmt import LINE_LENGTH
from acp_codegen.ir import naming
from acp_codegen.ir.nodes import Method, Protocol, Ref, Struct, TaggedUnion
from acp_codegen.render.builders import (
    Builder,
    method_builder,
    short_name,
    text_unions,
    update_builders,
)
from acp_codegen.render.pytypes import all_fields, python_literal

SIDES = ("agent", "client", "proxy", "protocol")


@dataclass(frozen=True)
class FanoutCase:
    """One variant of a fanned-out union: its tag, handler and Python type."""

    tag: str
    handler: str
    type_name: str
    description: str | None


@dataclass(frozen=True)
class Fanout:
    """A notification whose params hold a tagged union, dispatched per variant."""

    method: Method
    field: str  # Python name of the union field in the params
    tag_attr: str  # Python name of the tag on every variant
    union: str
    cases: tuple[FanoutCase, ...]
    unknown: str | None


def fanout_for(protocol: Protocol, method: Method) -> Fanout | None:
    """The per-variant fan-out of a notification, when its params carry exactly one union."""
    params = protocol.get(method.params) if method.params else None
    if method.kind != "notification" or not isinstance(params, Struct):
        return None
    unions = [
        (f, protocol.get(f.type.name))
        for f in all_fields(params, protocol)
        if isinstance(f.type, Ref) and isinstance(protocol.get(f.type.name), TaggedUnion)
    ]
    if len(unions) != 1:
        return None
    field, union = unions[0]
    assert isinstance(union, TaggedUnion)
    cases = tuple(
        FanoutCase(v.tag, "on_" + naming.snake(v.tag), v.target, v.description)
        for v in union.variants
        if v.tag is not None
    )
    return Fanout(method, field.py_name, union.tag_py, union.name, cases, union.unknown)


def cancelled_result(protocol: Protocol, method: Method) -> dict[str, object] | None:
    """The result a method defines for a request its caller cancels, when the schema has one.

    Structural rule: the result struct's only required field is a tagged union with a
    `cancelled` variant that needs nothing but its tag (ACP's `RequestPermissionOutcome`).
    """
    result = protocol.get(method.result) if method.result else None
    if method.kind != "request" or not isinstance(result, Struct):
        return None
    required = [f for f in all_fields(result, protocol) if f.required]
    if len(required) != 1 or not isinstance(required[0].type, Ref):
        return None
    union = protocol.get(required[0].type.name)
    if not isinstance(union, TaggedUnion):
        return None
    variant = next((v for v in union.variants if v.tag == "cancelled"), None)
    target = protocol.get(variant.target) if variant else None
    if not isinstance(target, Struct) or any(f.required and not f.tag for f in all_fields(target, protocol)):
        return None
    return {required[0].wire_name: {union.tag_wire: "cancelled"}}


# Names a peer already has: a builder's short name never takes one of them.
_PEER_NAMES = frozenset(
    {"connection", "session", "send", "ext_request", "ext_notify", "cancel_request", "request_timeout", "process", "stderr"}
)


def peer_builders(protocol: Protocol, methods: tuple[Method, ...]) -> tuple[dict[str, Builder], dict[str, str]]:
    """The builders of the methods a peer sends (by handler name: a wire name can be a request and
    a notification at once) and their short names (-> handler); a short name two methods would
    share goes to neither."""
    builders = {m.handler: b for m in methods if (b := method_builder(protocol, m))}
    taken = {m.handler for m in methods} | _PEER_NAMES
    shorts = [short_name(m) for m in methods]
    aliases: dict[str, str] = {}
    for m, short in zip(methods, shorts, strict=True):
        if m.handler in builders and short and short not in taken and shorts.count(short) == 1:
            aliases[short] = m.handler
    return builders, aliases


def session_handle(protocol: Protocol, fanout: Fanout) -> dict[str, object]:
    """The agent side's session handle: one builder per variant of the client's update union."""
    params = protocol.get(fanout.method.params or "")
    assert isinstance(params, Struct)
    others = [f for f in all_fields(params, protocol) if f.required and f.py_name != fanout.field]
    return {
        "fanout": fanout,
        "session_field": others[0].py_name if len(others) == 1 else None,
        "builders": update_builders(protocol, ((c.tag, c.type_name, c.description) for c in fanout.cases)),
    }


def both_kinds_rows(side: str, methods: tuple[Method, ...]) -> list[str]:
    """The `*_METHODS` entries of the wire names a side handles both as a request and as a
    notification (the request's spec, dispatching a message without an id to the notification's),
    laid out as black lays them out at the table's indentation."""
    requests = {m.wire_name for m in methods if m.kind == "request"}
    rows: list[str] = []
    for wire in sorted({m.wire_name for m in methods if m.kind == "notification"} & requests):
        key, table = python_literal(wire), side.upper()
        head = f"{key}: {table}_REQUESTS[{key}].with_notification("
        inner = f"{table}_NOTIFICATIONS[{key}]"
        if 8 + len(head) + len(inner) + 2 <= LINE_LENGTH:
            rows.append(f"        {head}{inner}),")
        else:
            rows += [f"        {head}", f"            {inner}", "        ),"]
    return rows


def dispatch_context(protocol: Protocol) -> dict[str, object]:
    """Template variables for dispatch.py."""
    by_side = {side: protocol.methods_for(side) for side in SIDES}  # type: ignore[arg-type]
    fanouts = {m.wire_name: f for m in by_side["client"] + by_side["agent"] if (f := fanout_for(protocol, m))}
    cancelled = {(m.side, m.wire_name): c for m in protocol.methods if (c := cancelled_result(protocol, m))}
    handles = [session_handle(protocol, f) for f in fanouts.values() if f.method.side == "client"]
    return {
        "by_side": by_side,
        "fanouts": fanouts,
        "sides": SIDES,
        "cancelled": cancelled,
        "texts": list(text_unions(protocol).values()),
        "handle": handles[0] if len(handles) == 1 and handles[0]["session_field"] else None,
        "builders": {side: peer_builders(protocol, by_side[side]) for side in ("agent", "client")},
        "both_kinds": {side: both_kinds_rows(side, by_side[side]) for side in SIDES},
    }
