"""Dispatch context: what the dispatch template needs, derived from the IR's methods.

Owns the per-side method tables, the typed peer proxies, and the session-update fan-out: a
notification whose params carry one tagged union gets one `on_<tag>` handler per variant.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir import naming
from codegen.ir.nodes import Method, Protocol, Ref, Struct, TaggedUnion
from codegen.render.pytypes import all_fields

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


def dispatch_context(protocol: Protocol) -> dict[str, object]:
    """Template variables for dispatch.py."""
    by_side = {side: protocol.methods_for(side) for side in SIDES}  # type: ignore[arg-type]
    fanouts = {m.wire_name: f for m in by_side["client"] + by_side["agent"] if (f := fanout_for(protocol, m))}
    cancelled = {(m.side, m.wire_name): c for m in protocol.methods if (c := cancelled_result(protocol, m))}
    return {"by_side": by_side, "fanouts": fanouts, "sides": SIDES, "cancelled": cancelled}
