"""The session reducer's spec (`session.py`), derived from the definitions.

Owns the decision whether a revision gets a reducer at all (it needs the v2 message-id model:
`user_message` and `agent_message` upserts in the `SessionUpdate` union; v1 and the first v2
drafts have neither, so their packages have no `session.py`), the variants the reducer handles,
and, for every ID-addressed entity, the fields its upserts patch and the spec rule each follows.
Every class and field the template names comes from here, so a revision that lacks a variant or
a field never references it.
"""

from __future__ import annotations

from acp_codegen.errors import fail
from acp_codegen.ir.nodes import (
    ArrayOf,
    Enum,
    Field,
    Protocol,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)
from acp_codegen.ir.session_nodes import (
    OWN_NAMES,
    Chunk,
    EntitySpec,
    PatchField,
    PlanSpec,
    RecordSpec,
    SessionSpec,
    Snapshot,
    Upsert,
)
from acp_codegen.ir.spelling import all_fields
from acp_codegen.ir.typenames import TypeNames

# Fields whose rule is not the generic patch: (variant tag, wire name) -> rule (and reset value).
_COLLECTIONS = frozenset({"content", "summary"})
_RESETS = {("tool_call_update", "kind"): "other", ("tool_call_update", "status"): "pending"}
_PARTICIPANTS = frozenset(
    {("session_message", "senderSessionId"), ("session_message", "recipientSessionId")}
)
_BYTES = frozenset({("terminal_update", "output")})


def _non_null(expr: TypeExpr) -> TypeExpr:
    if isinstance(expr, UnionOf):
        rest = [o for o in expr.options if not (isinstance(o, Scalar) and o.kind == "none")]
        if len(rest) == 1:
            return rest[0]
    return expr


def _struct(protocol: Protocol, name: str) -> Struct | None:
    found = protocol.get(name)
    return found if isinstance(found, Struct) else None


def _payload(protocol: Protocol, name: str) -> list[Field]:
    """A variant's fields without its tags."""
    struct = _struct(protocol, name)
    return [f for f in all_fields(struct, protocol) if not f.tag] if struct else []


def _field(tag: str, f: Field, refs: TypeNames) -> PatchField:
    protocol = refs.protocol
    inner = _non_null(f.type)
    if f.wire_name == "_meta":
        patch = "patches the stored metadata" in (f.description or "")
        return PatchField(
            f.py_name, "meta_patch" if patch else "event_meta", "dict[str, Any] | None", "None"
        )
    if f.wire_name in _COLLECTIONS and isinstance(inner, ArrayOf):
        return PatchField(
            f.py_name,
            "collection",
            f"list[{refs.plain(inner.item)}]",
            "field(default_factory=list)",
        )
    reset = _RESETS.get((tag, f.wire_name))
    enum = protocol.get(inner.name) if isinstance(inner, Ref) else None
    if reset is not None and isinstance(enum, Enum):
        const = next((v.const_name for v in enum.values if v.value == reset), None)
        if const is not None:
            expr = f"{refs.use(enum.name)}.{const}"
            return PatchField(f.py_name, "reset", enum.name, expr, reset=expr, reset_wire=reset)
    target = _struct(protocol, inner.name) if isinstance(inner, Ref) else None
    if (tag, f.wire_name) in _BYTES and target is not None:
        data = next((g.py_name for g in target.fields if g.wire_name == "data"), None)
        if data is not None:
            return PatchField(
                f.py_name, "bytes", "bytearray", "field(default_factory=bytearray)", data_attr=data
            )
    if (tag, f.wire_name) in _PARTICIPANTS:
        return PatchField(f.py_name, "keep_on_null", refs.optional(f.type), "None")
    return PatchField(
        f.py_name, "required" if f.required else "replace", refs.optional(f.type), "None"
    )


def _upsert(
    tag: str, variant: str, id_wire: str | None, refs: TypeNames
) -> tuple[Upsert, Field | None]:
    fields = _payload(refs.protocol, variant)
    id_field = next((f for f in fields if f.wire_name == id_wire), None)
    patched = tuple(_field(tag, f, refs) for f in fields if f is not id_field)
    return Upsert(tag, refs.use(variant), id_field.py_name if id_field else "", patched), id_field


def _merge(upserts: list[Upsert]) -> tuple[PatchField, ...]:
    out: dict[str, PatchField] = {}
    for upsert in upserts:
        for f in upsert.fields:
            out.setdefault(f.py_name, f)
    return tuple(out.values())


# (kind, class, id wire name, upsert tags, {chunk tag: (role, upsert collection wire name)}, doc)
_ENTITIES: tuple[
    tuple[str, str, str, tuple[str, ...], dict[str, tuple[str | None, str]], str], ...
] = (
    (
        "message",
        "TimelineMessage",
        "messageId",
        ("user_message", "agent_message", "agent_thought"),
        {
            "user_message_chunk": ("user_message", "content"),
            "agent_message_chunk": ("agent_message", "content"),
            "agent_thought_chunk": ("agent_thought", "content"),
        },
        "A user message, agent message or agent thought (`role`), keyed by role and `messageId`.",
    ),
    (
        "tool_call",
        "TimelineToolCall",
        "toolCallId",
        ("tool_call_update",),
        {"tool_call_content_chunk": (None, "content")},
        "A tool call, keyed by `toolCallId`.",
    ),
    (
        "terminal",
        "TimelineTerminal",
        "terminalId",
        ("terminal_update",),
        {"terminal_output_chunk": (None, "output")},
        "An Agent-owned display-only terminal, keyed by `terminalId`.",
    ),
    (
        "compaction",
        "TimelineCompaction",
        "compactionId",
        ("compaction_update",),
        {"compaction_summary_chunk": (None, "summary")},
        "A context compaction, keyed by `compactionId`.",
    ),
    (
        "subagent",
        "TimelineSubagent",
        "sessionId",
        ("subagent_update",),
        {},
        "An owned child session announced by `subagent_update`, keyed by its session ID.",
    ),
    (
        "session_message",
        "TimelineSessionMessage",
        "messageId",
        ("session_message",),
        {"session_message_chunk": (None, "content")},
        "A message to or from another session, keyed by `messageId`.",
    ),
)


def _entity(
    spec: tuple[str, str, str, tuple[str, ...], dict[str, tuple[str | None, str]], str],
    variants: dict[str, str],
    refs: TypeNames,
) -> EntitySpec | None:
    kind, class_name, id_wire, upsert_tags, chunk_tags, doc = spec
    upserts: list[Upsert] = []
    id_annotation = "str"
    for tag in upsert_tags:
        if tag in variants:
            upsert, id_field = _upsert(tag, variants[tag], id_wire, refs)
            if id_field is None:
                continue
            id_annotation = refs.plain(id_field.type)
            upserts.append(upsert)
    if not upserts:
        return None
    fields = _merge(upserts)
    by_name = {f.py_name: f for f in fields}
    chunks: list[Chunk] = []
    for tag, (role, target_wire) in chunk_tags.items():
        if tag not in variants or (role is not None and role not in {u.tag for u in upserts}):
            continue
        payload = {f.wire_name: f for f in _payload(refs.protocol, variants[tag])}
        id_field = payload.get(id_wire)
        content = payload.get("data" if kind == "terminal" else "content")
        target = next((f for f in fields if f.py_name == _py(refs, upserts, target_wire)), None)
        if id_field is None or content is None or target is None:
            continue
        participants = tuple(
            (f.py_name, wire, wire in payload)
            for wire in ("senderSessionId", "recipientSessionId")
            if (f := by_name.get(_py(refs, upserts, wire) or "")) is not None
            and f.rule == "keep_on_null"
        )
        chunks.append(
            Chunk(
                tag,
                refs.use(variants[tag]),
                id_field.py_name,
                content.py_name,
                target.py_name,
                role,
                participants,
            )
        )
    return EntitySpec(
        kind,
        class_name,
        upserts[0].id_attr,
        id_annotation,
        fields,
        tuple(upserts),
        tuple(chunks),
        doc,
        roles=kind == "message",
    )


def _py(refs: TypeNames, upserts: list[Upsert], wire: str) -> str | None:
    for upsert in upserts:
        for f in _payload(refs.protocol, upsert.variant):
            if f.wire_name == wire:
                return f.py_name
    return None


def _plan(variants: dict[str, str], refs: TypeNames) -> PlanSpec | None:
    protocol = refs.protocol
    if "plan_update" not in variants:
        return None
    fields = _payload(protocol, variants["plan_update"])
    content = next(
        (
            f
            for f in fields
            if isinstance(f.type, Ref) and isinstance(protocol.get(f.type.name), TaggedUnion)
        ),
        None,
    )
    if content is None or not isinstance(content.type, Ref):
        return None
    union = protocol.get(content.type.name)
    assert isinstance(union, TaggedUnion)
    members = [v.target for v in union.variants] + ([union.unknown] if union.unknown else [])
    ids = [{f.wire_name: f for f in _payload(protocol, m)} for m in members]
    wire = next((w for w in ("planId", "id") if all(w in i and i[w].required for i in ids)), None)
    if wire is None:
        return None
    meta = next((f.py_name for f in fields if f.wire_name == "_meta"), None)
    removed = variants.get("plan_removed")
    removed_id = (
        next(
            (f.py_name for f in _payload(protocol, removed) if f.wire_name in ("planId", "id")),
            None,
        )
        if removed
        else None
    )
    return PlanSpec(
        refs.use(variants["plan_update"]),
        content.py_name,
        refs.use(union.name),
        ids[0][wire].py_name,
        refs.plain(ids[0][wire].type),
        meta,
        refs.use(removed) if removed and removed_id else None,
        removed_id,
    )


def session_spec(protocol: Protocol) -> SessionSpec | None:
    """The reducer's spec, or None when the revision lacks the v2 message-id model."""
    union = protocol.by_def_name("SessionUpdate")
    if not isinstance(union, TaggedUnion) or not {"user_message", "agent_message"} <= set(
        union.known_tags
    ):
        return None
    for name in OWN_NAMES:
        if protocol.get(name) is not None:
            raise fail(
                "session-name-clash", f"the schema defines {name!r}, which session.py also defines"
            )
    refs = TypeNames(protocol)
    variants = {v.tag: v.target for v in union.variants if v.tag is not None}
    entities = tuple(e for spec in _ENTITIES if (e := _entity(spec, variants, refs)) is not None)
    records: list[RecordSpec] = []
    for tag, class_name, attr, doc in (
        (
            "usage_update",
            "ContextUsage",
            "usage",
            "Context window usage and cumulative cost (`usage_update`).",
        ),
        (
            "session_info_update",
            "SessionDetails",
            "info",
            "Session metadata (`session_info_update`).",
        ),
    ):
        if tag in variants:
            records.append(
                RecordSpec(class_name, attr, _upsert(tag, variants[tag], None, refs)[0], doc)
            )
    snapshots: list[Snapshot] = []
    for tag in ("available_commands_update", "config_option_update"):
        if tag in variants:
            for f in _payload(protocol, variants[tag]):
                if f.required and f.wire_name != "_meta":
                    snapshots.append(
                        Snapshot(tag, refs.use(variants[tag]), f.py_name, refs.plain(f.type))
                    )
    state = variants.get("state_update")
    state_def = protocol.get(state) if state else None
    state_tag = state_def.tag_py if isinstance(state_def, TaggedUnion) else None
    plan = _plan(variants, refs)
    if state and state_tag:
        refs.use(state)
    notice = refs.use(variants["notice"]) if "notice" in variants else None
    refs.use(union.name)
    handlers = [(u.tag, "_on_" + u.tag) for e in entities for u in e.upserts]
    handlers += [(c.tag, "_on_" + c.tag) for e in entities for c in e.chunks]
    handlers += [(r.upsert.tag, "_on_" + r.upsert.tag) for r in records] + [
        (x.tag, "_on_" + x.tag) for x in snapshots
    ]
    handlers += [("plan_update", "_on_plan_update")] if plan else []
    handlers += [("plan_removed", "_on_plan_removed")] if plan and plan.removed else []
    handlers += [("state_update", "_on_state_update")] if state_tag else []
    handlers += [("notice", "_on_notice")] if notice else []
    enums = sorted(n for n in refs.names if isinstance(protocol.get(n), Enum))
    models = sorted(n for n in refs.names if n not in enums)
    return SessionSpec(
        union=union.name,
        tag_attr=union.tag_py,
        entities=entities,
        records=tuple(records),
        snapshots=tuple(snapshots),
        plan=plan,
        state_variant=state if state_tag else None,
        state_tag_attr=state_tag,
        known_states=state_def.known_tags if isinstance(state_def, TaggedUnion) else (),
        notice=notice,
        handlers=tuple(handlers),
        model_imports=tuple(models),
        enum_imports=tuple(enums),
    )
