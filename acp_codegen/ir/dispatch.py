"""The package's dispatch API, as `dispatch.py` prints it: method tables, handler bases, peers.

Owns the per-side method tables (with a request's own answer when its caller cancels it), the
handler classes (`Agent`, `Client`: one typed method per method handled, and for a notification
whose params carry one tagged union, `session/update`, one `on_<tag>` method per variant), the
typed peers with their builders and short names, the agent's session handle, the converters of
text unions, and the enums the module imports. Models are named through the `models` module
(`models.PromptRequest`), so `typing.get_type_hints` resolves them without loading every model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from acp_codegen.ir import naming
from acp_codegen.ir.builders import (
    Builder,
    TextUnion,
    method_builder,
    short_name,
    text_unions,
    update_builders,
)
from acp_codegen.ir.nodes import Enum, Method, Protocol, Ref, Struct, TaggedUnion
from acp_codegen.ir.spelling import all_fields, python_literal
from acp_codegen.ir.typenames import TypeNames

SIDES = ("agent", "client", "proxy", "protocol")

# Names a peer already has: a builder's short name never takes one of them.
_PEER_NAMES = frozenset(
    {
        "connection",
        "session",
        "send",
        "ext_request",
        "ext_notify",
        "cancel_request",
        "request_timeout",
        "process",
        "stderr",
    }
)


@dataclass(frozen=True)
class TableRow:
    """One method of a side's table: wire name, params and result class names, handler method,
    and the request's own answer to a cancellation (Python source), if the schema defines one."""

    wire_name: str
    params: str | None
    result: str | None
    handler: str
    cancelled: str | None


@dataclass(frozen=True)
class SideTables:
    """The requests and notifications one side handles."""

    side: str
    requests: tuple[TableRow, ...]
    notifications: tuple[TableRow, ...]


@dataclass(frozen=True)
class FanoutCase:
    """One variant of a fanned-out union: its tag, handler method and annotation."""

    tag: str
    handler: str
    annotation: str
    description: str | None


@dataclass(frozen=True)
class Fanout:
    """A notification whose params hold one tagged union, dispatched to one method per variant."""

    method: Method
    field: str  # Python name of the union field in the params
    tag_attr: str  # Python name of the tag on every variant
    union: str  # the union's name
    cases: tuple[FanoutCase, ...]
    unknown: str | None  # the unknown variant's class name (None: a closed union)


@dataclass(frozen=True)
class HandlerMethod:
    """One method of a handler class: `async def name(self, params: params) -> result`."""

    name: str
    wire_name: str
    kind: Literal["request", "notification"]
    params: str  # the annotation ("None" for a method without params)
    result: str  # the annotation ("None" for a notification or an empty result)
    description: str | None
    fanout: Fanout | None


@dataclass(frozen=True)
class HandlerClass:
    """`Agent` or `Client`: the methods its side handles."""

    name: str
    side: str
    peer_side: str
    peer: str  # the class of the peer it talks to
    methods: tuple[HandlerMethod, ...]

    @property
    def fanouts(self) -> tuple[Fanout, ...]:
        """The fanned-out notifications among its methods."""
        return tuple(m.fanout for m in self.methods if m.fanout is not None)


@dataclass(frozen=True)
class PeerMethod:
    """One method of a peer: sends `wire_name` with its params (a model, or a builder's fields)."""

    name: str
    wire_name: str
    kind: Literal["request", "notification"]
    params: str  # the annotation
    result: str  # the annotation ("None" for a notification or an empty result)
    result_model: str | None  # the result's class, validated into
    builder: Builder | None


@dataclass(frozen=True)
class PeerClass:
    """`AgentPeer` or `ClientPeer`: what one side sends the other."""

    name: str
    base: str
    side: str  # the side that sends
    peer_side: str  # the side it sends to
    methods: tuple[PeerMethod, ...]
    aliases: tuple[tuple[str, str], ...]  # (short name, method name)


@dataclass(frozen=True)
class SessionHandle:
    """The agent's view of one session: a typed sender per variant of the client's update union."""

    field: str  # Python name of the session id field of the notification's params
    sender: str  # the peer method that sends the notification
    params: str  # the notification's params class
    update_field: str
    union: str  # the union's annotation
    builders: tuple[Builder, ...]


@dataclass(frozen=True)
class Dispatch:
    """What `dispatch.py` holds."""

    tables: tuple[SideTables, ...]
    handlers: tuple[HandlerClass, ...]  # Agent, Client
    peers: tuple[PeerClass, ...]  # ClientPeer (the agent's), AgentPeer (the client's)
    texts: tuple[TextUnion, ...]
    handle: SessionHandle | None
    enum_imports: tuple[str, ...]  # enums and their value aliases the module names
    uses: frozenset[str]  # the symbols besides those every dispatch module uses (`Sequence`, ...)


def fanout_for(protocol: Protocol, method: Method, types: TypeNames | None = None) -> Fanout | None:
    """The per-variant fan-out of a notification, when its params carry exactly one union."""
    types = types or TypeNames(protocol)
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
        FanoutCase(v.tag, "on_" + naming.snake(v.tag), types.use(v.target), v.description)
        for v in union.variants
        if v.tag is not None
    )
    if union.unknown:
        types.use(union.unknown)
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
    if not isinstance(target, Struct) or any(
        f.required and not f.tag for f in all_fields(target, protocol)
    ):
        return None
    return {required[0].wire_name: {union.tag_wire: "cancelled"}}


def _tables(protocol: Protocol, side: str) -> SideTables:
    rows: dict[str, list[TableRow]] = {"request": [], "notification": []}
    for m in protocol.methods_for(side):  # type: ignore[arg-type]
        cancelled = cancelled_result(protocol, m)
        rows[m.kind].append(
            TableRow(
                m.wire_name,
                m.params,
                m.result,
                m.handler,
                python_literal(cancelled) if cancelled else None,
            )
        )
    return SideTables(side, tuple(rows["request"]), tuple(rows["notification"]))


def _annotation(types: TypeNames, name: str | None) -> str:
    return types.use(name) if name else "None"


def _handler_class(
    protocol: Protocol, name: str, side: str, peer_side: str, peer: str, types: TypeNames
) -> HandlerClass:
    methods = tuple(
        HandlerMethod(
            m.handler,
            m.wire_name,
            m.kind,
            _annotation(types, m.params),
            _annotation(types, m.result) if m.kind == "request" else "None",
            m.description,
            fanout_for(protocol, m, types),
        )
        for m in protocol.methods_for(side)  # type: ignore[arg-type]
    )
    return HandlerClass(name, side, peer_side, peer, methods)


def _peer_class(
    protocol: Protocol,
    name: str,
    base: str,
    side: str,
    peer_side: str,
    types: TypeNames,
    texts: Mapping[str, TextUnion],
) -> PeerClass:
    sent = protocol.methods_for(peer_side)  # type: ignore[arg-type]
    methods = tuple(
        PeerMethod(
            m.handler,
            m.wire_name,
            m.kind,
            _annotation(types, m.params),
            _annotation(types, m.result) if m.kind == "request" else "None",
            m.result if m.kind == "request" else None,
            method_builder(protocol, m, types, texts),
        )
        for m in sent
    )
    # a short name two methods would share goes to neither (a request and a notification of
    # one wire name have the same one)
    taken = {m.handler for m in sent} | _PEER_NAMES
    shorts = [short_name(m) for m in sent]
    aliases: dict[str, str] = {}
    for m, built, short in zip(sent, methods, shorts, strict=True):
        if built.builder is not None and short and short not in taken and shorts.count(short) == 1:
            aliases[short] = m.handler
    return PeerClass(name, base, side, peer_side, methods, tuple(aliases.items()))


def _session_handle(
    protocol: Protocol,
    handlers: tuple[HandlerClass, ...],
    types: TypeNames,
    texts: Mapping[str, TextUnion],
) -> SessionHandle | None:
    """The agent side's session handle: one builder per variant of the client's update union."""
    client = next(h for h in handlers if h.side == "client")
    if len(client.fanouts) != 1:
        return None
    fanout = client.fanouts[0]
    params = protocol.get(fanout.method.params or "")
    assert isinstance(params, Struct)
    others = [f for f in all_fields(params, protocol) if f.required and f.py_name != fanout.field]
    if len(others) != 1:
        return None
    cases = ((c.tag, _class_name(c.annotation), c.description) for c in fanout.cases)
    builders = update_builders(protocol, cases, types, texts)
    union = types.use(fanout.union)
    return SessionHandle(
        others[0].py_name,
        fanout.method.handler,
        fanout.method.params or "",
        fanout.field,
        union,
        builders,
    )


def _class_name(annotation: str) -> str:
    return annotation.removeprefix("models.")


def dispatch_of(protocol: Protocol) -> Dispatch:
    """The dispatch API of a protocol."""
    types = TypeNames(protocol, qualified=True)
    tables = tuple(_tables(protocol, side) for side in SIDES)
    handlers = (
        _handler_class(protocol, "Agent", "agent", "client", "ClientPeer", types),
        _handler_class(protocol, "Client", "client", "agent", "AgentPeer", types),
    )
    texts = text_unions(protocol, types)
    peers = (
        _peer_class(protocol, "ClientPeer", "PeerBase", "agent", "client", types, texts),
        _peer_class(protocol, "AgentPeer", "AgentPeerBase", "client", "agent", types, texts),
    )
    handle = _session_handle(protocol, handlers, types, texts)
    enums = {n for n in types.names if isinstance(protocol.get(n), Enum)}
    uses = set(types.symbols)
    if texts:
        uses.update(("Sequence", "AcpModel"))
    if any(m.builder for p in peers for m in p.methods) or handle is not None:
        uses.update(("Any", "overload", "build"))
    if any(m.kind == "notification" and m.fanout is None for h in handlers for m in h.methods):
        uses.add("logging")
    return Dispatch(
        tables,
        handlers,
        peers,
        tuple(texts.values()),
        handle,
        tuple(sorted(enums | types.aliases)),
        frozenset(uses),
    )
