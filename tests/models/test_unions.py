"""Tagged unions and enums: what the generator detects equals what the schema says (recomputed
here from the JSON, and for the draft also as listed in draft-structure.md), and the generated
unions pick variants by tag, keep unknown variants whole, and report a known variant's errors.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from models_facts import (
    DRAFT_STRUCTURE,
    PINNED,
    enums,
    ir,
    load,
    parse_draft_structure,
    pascal,
    unions,
)
from models_instances import NONE, Instances, same_json
from pydantic import BaseModel, TypeAdapter, ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


def _ir_unions(target: str) -> dict[str, Any]:
    return {
        d.def_name: d for d in ir(PINNED[target]).definitions if d.kind == "union" and d.def_name
    }


def _ir_enums(target: str) -> dict[str, Any]:
    return {
        d.def_name: d for d in ir(PINNED[target]).definitions if d.kind == "enum" and d.def_name
    }


@pytest.mark.parametrize("target", sorted(PINNED))
def test_detected_tagged_unions_equal_the_structural_recomputation(target: str) -> None:
    expected = unions(load(PINNED[target]))
    found = _ir_unions(target)
    assert sorted(found) == sorted(expected)
    for name, fact in expected.items():
        union = found[name]
        assert union.tag_wire == fact.tag, name
        assert union.known_tags == fact.tags, name
        assert (union.unknown is not None) == fact.open, name
        assert (union.none_variant is not None) == fact.has_none, name


@pytest.mark.parametrize("target", sorted(PINNED))
def test_detected_enums_equal_the_structural_recomputation(target: str) -> None:
    expected = enums(load(PINNED[target]))
    found = _ir_enums(target)
    assert sorted(found) == sorted(expected)
    for name, fact in expected.items():
        assert tuple(v.value for v in found[name].values) == fact.values, name
        assert found[name].open == fact.open, name


def test_draft_structure_note_matches_schema_and_generator(draft: ModuleType) -> None:
    listed_unions, listed_open, listed_closed = parse_draft_structure(
        DRAFT_STRUCTURE.read_text(encoding="utf-8")
    )
    assert (len(listed_unions), len(listed_open), len(listed_closed)) == (21, 18, 1)
    doc = load(PINNED["acp_v2_draft"])
    computed = unions(doc)
    assert {n: (f.tag, f.tags, f.open) for n, f in computed.items()} == {
        n: (f.tag, f.tags, f.open) for n, f in listed_unions.items()
    }
    computed_enums = enums(doc)
    assert {n: f.values for n, f in computed_enums.items() if f.open} == {
        n: f.values for n, f in listed_open.items()
    }
    assert {n: f.values for n, f in computed_enums.items() if not f.open} == {
        n: f.values for n, f in listed_closed.items()
    }
    for name, fact in {**listed_open, **listed_closed}.items():
        cls = getattr(draft, name)
        assert cls.known_values() == fact.values and cls.__acp_open__ is fact.open, name


def _instances_by_tag(
    inst: Instances, key: str, tag_wire: str, tags: tuple[str, ...]
) -> dict[str, Any]:
    """One generated instance of `$defs[key]` per known tag value."""
    found: dict[str, Any] = {}
    for seed in range(600):
        value = inst.valid(key, seed)
        if isinstance(value, dict) and value.get(tag_wire) in tags:
            found.setdefault(value[tag_wire], value)
            if len(found) == len(tags):
                break
    return found


@pytest.mark.parametrize("target", sorted(PINNED))
def test_generated_unions_pick_variants_by_tag(target: str, request: pytest.FixtureRequest) -> None:
    pkg = request.getfixturevalue(
        {"acp_v2_draft": "draft", "acp_v2": "stable", "acp_v1": "v1"}[target]
    )
    doc = load(PINNED[target])
    inst = Instances(doc)
    checked = 0
    for name, fact in unions(doc).items():
        adapter: TypeAdapter[Any] = TypeAdapter(getattr(pkg, name))
        by_tag = _instances_by_tag(inst, name, fact.tag, fact.tags)
        for tag in fact.tags:
            value = by_tag.get(tag, NONE)
            assert value is not NONE, f"no instance of {name} with {fact.tag}={tag!r}"
            obj = adapter.validate_json(json.dumps(value))
            assert name + pascal(tag) in type(obj).__name__, (
                name,
                tag,
                type(obj).__name__,
            )  # nested: Unknown<Union><Tag>
            assert same_json(obj.to_dict(), value)
            checked += 1
        if fact.open:
            value = by_tag[fact.tags[0]]
            for unknown in ("_vendor_thing", "future_variant"):
                payload = {**value, fact.tag: unknown, "_extra": {"kept": [1, 2.5, None]}}
                obj = adapter.validate_json(json.dumps(payload))
                assert type(obj).__name__.startswith("Unknown" + name), (name, type(obj).__name__)
                assert same_json(json.loads(obj.to_json()), payload)
                assert same_json(obj.raw, payload)
    assert checked >= sum(len(f.tags) for f in unions(doc).values())


# -- hand cases (draft) ----------------------------------------------------------------------------


def _update(draft: ModuleType, update: dict[str, Any]) -> Any:
    return draft.UpdateSessionNotification.from_json(
        json.dumps({"sessionId": "sess_1", "update": update})
    )


@pytest.mark.parametrize("tag", ["_vendor_thing", "future_update_kind"])
def test_unknown_session_update_keeps_the_whole_payload(draft: ModuleType, tag: str) -> None:
    update = {
        "sessionUpdate": tag,
        "messageId": "m1",
        "content": {"type": "text", "text": 'é "quoted" 🙂'},
        "nested": {"deep": [1, 2.0, -0.0, None, True, {"x": "y"}], "big": 2**63 - 1},
        "_meta": {"vendor": {"k": 1}},
    }
    note = _update(draft, update)
    assert type(note.update) is draft.UnknownSessionUpdate
    assert note.update.session_update == tag
    assert note.update.session_update.is_extension is tag.startswith("_")
    assert note.update.session_update.is_reserved is not tag.startswith("_")
    assert same_json(json.loads(note.to_json())["update"], update)
    assert same_json(note.update.raw, update)
    wire = json.dumps(
        {"sessionId": "sess_1", "update": update}, separators=(",", ":"), ensure_ascii=False
    )
    assert json.loads(note.to_json()) == json.loads(wire)


def test_unknown_variant_nested_in_a_known_one(draft: ModuleType) -> None:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "_vendor_blob", "bytes": "AA==", "n": 1.5},
    }
    note = _update(draft, update)
    assert type(note.update) is draft.SessionUpdateAgentMessageChunk
    assert type(note.update.content) is draft.UnknownContentBlock
    assert same_json(note.to_dict()["update"], update)


def test_known_tag_with_an_invalid_payload_is_that_variants_error(draft: ModuleType) -> None:
    with pytest.raises(ValidationError) as caught:
        _update(draft, {"sessionUpdate": "agent_message_chunk", "messageId": 5})
    errors = caught.value.errors()
    assert {e["loc"][:2] for e in errors} == {("update", "agent_message_chunk")}
    assert {(e["loc"][2], e["type"]) for e in errors} == {
        ("messageId", "string_type"),
        ("content", "missing"),
    }
    assert "Unknown" not in str(caught.value) and "__unknown__" not in str(caught.value)

    with pytest.raises(ValidationError) as caught:  # nested: a known content block, invalid
        _update(
            draft,
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": 1},
            },
        )
    assert [e["loc"] for e in caught.value.errors()] == [
        ("update", "agent_message_chunk", "content", "text", "text")
    ]


def test_nested_unions_state_update_state_stop_reason(draft: ModuleType) -> None:
    base = {"sessionUpdate": "state_update", "state": "idle"}
    cases = {
        "end_turn": draft.SessionUpdateStateUpdateIdleEndTurn,
        "max_tokens": draft.SessionUpdateStateUpdateIdleMaxTokens,
        "cancelled": draft.SessionUpdateStateUpdateIdleCancelled,
        "error": draft.SessionUpdateStateUpdateIdleError,
        "_vendor_pause": draft.UnknownSessionUpdateStateUpdateIdle,
        "future_reason": draft.UnknownSessionUpdateStateUpdateIdle,
    }
    for reason, cls in cases.items():
        update = {
            **base,
            "stopReason": reason,
            "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1},
        }
        note = _update(draft, update)
        assert type(note.update) is cls, reason
        assert isinstance(note.update.stop_reason, draft.StopReason)
        assert note.update.stop_reason == reason
        assert note.update.stop_reason.is_known is (reason in draft.StopReason.known_values())
        assert same_json(note.to_dict()["update"], update)
    end = _update(draft, {**base, "stopReason": "end_turn"}).update
    assert isinstance(end, draft.StateUpdateIdleEndTurn) and isinstance(
        end, draft.IdleStateUpdateEndTurn
    )
    assert end.stop_reason is draft.StopReason.END_TURN
    for absent in ({}, {"stopReason": None}):
        note = _update(draft, {**base, **absent})
        assert type(note.update) is draft.SessionUpdateStateUpdateIdleNone
        assert note.update.stop_reason is None
        assert note.to_dict()["update"] == {**base, **absent}
    malformed = _update(
        draft, {**base, "stopReason": 7}
    )  # the schema's leniency: treated as absent
    assert type(malformed.update) is draft.SessionUpdateStateUpdateIdleNone
    assert malformed.to_dict()["update"] == base
    other_state = _update(draft, {"sessionUpdate": "state_update", "state": "_paused", "x": 1})
    assert type(other_state.update) is draft.UnknownSessionUpdateStateUpdate
    assert other_state.to_dict()["update"] == {
        "sessionUpdate": "state_update",
        "state": "_paused",
        "x": 1,
    }
    running = _update(draft, {"sessionUpdate": "state_update", "state": "running"})
    assert type(running.update) is draft.SessionUpdateStateUpdateRunning


def test_stop_reason_in_every_package(
    draft: ModuleType, stable: ModuleType, v1: ModuleType
) -> None:
    """`StopReason` is exported everywhere. In v2 (draft and stable) it is the open tag enum of
    `IdleStateUpdate` (the schema's "Custom or future stop reason" fallback): any string is kept.
    In v1 the schema defines `StopReason` as a `oneOf` of string consts with no fallback, so the
    generated enum is closed: unknown stop reasons are rejected, exactly as `jsonschema`
    rejects them (the generator does not invent openness the schema does not state)."""
    reasons = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
    for pkg in (draft, stable, v1):
        assert "StopReason" in pkg.__all__
        assert set(reasons) <= set(pkg.StopReason.known_values())
        assert pkg.StopReason.END_TURN == "end_turn"
    for pkg in (draft, stable):
        assert pkg.StopReason.__acp_open__ is True
        value = TypeAdapter(pkg.StopReason).validate_python("_vendor_reason")
        assert value == "_vendor_reason" and value.is_extension
    assert v1.StopReason.__acp_open__ is False
    with pytest.raises(ValidationError):
        TypeAdapter(v1.StopReason).validate_python("_vendor_reason")
    with pytest.raises(ValidationError):
        v1.PromptResponse.model_validate({"stopReason": "future_reason"})
    ok = v1.PromptResponse.model_validate({"stopReason": "refusal"})
    assert ok.stop_reason is v1.StopReason.REFUSAL


def test_idle_state_update_exposes_stop_reason_typed_stop_reason(draft: ModuleType) -> None:
    protocol = ir(PINNED["acp_v2_draft"])
    union = protocol.by_def_name("IdleStateUpdate")
    for variant in union.variants:
        cls = getattr(draft, variant.target)
        annotation = cls.model_fields["stop_reason"].annotation
        assert annotation is (draft.StopReason if variant.tag else type(None)), variant.target
        if variant.tag:
            obj = cls()
            assert obj.stop_reason is getattr(draft.StopReason, variant.tag.upper())
            assert obj.to_dict() == {"stopReason": variant.tag}
    assert draft.UnknownIdleStateUpdate.model_fields["stop_reason"].annotation is draft.StopReason
    parsed = TypeAdapter(draft.IdleStateUpdate).validate_python({"stopReason": "refusal"})
    assert (
        isinstance(parsed, draft.IdleStateUpdateRefusal)
        and parsed.stop_reason is draft.StopReason.REFUSAL
    )


def test_variant_classes_check_their_own_tag(draft: ModuleType) -> None:
    """A variant class validated directly only takes its own tag value (also when the tag is
    typed by the open enum), and the unknown variant takes no known one."""
    with pytest.raises(ValidationError):
        draft.IdleStateUpdateEndTurn.model_validate({"stopReason": "max_tokens"})
    with pytest.raises(ValidationError):
        draft.IdleStateUpdateEndTurn(stop_reason=draft.StopReason.MAX_TOKENS)
    with pytest.raises(ValidationError):
        draft.IdleStateUpdateEndTurn.model_validate_json('{"stopReason": "_vendor"}')
    with pytest.raises(ValidationError, match="known variant"):
        draft.UnknownIdleStateUpdate.model_validate({"stopReason": "end_turn"})
    with pytest.raises(ValidationError, match="known variant"):
        draft.UnknownSessionUpdate.model_validate({"sessionUpdate": "plan_update"})
    with pytest.raises(ValidationError):
        draft.SessionUpdateAgentMessageChunk.model_validate(
            {
                "sessionUpdate": "user_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": ""},
            }
        )
    assert draft.UnknownIdleStateUpdate.model_validate({"stopReason": "_x"}).stop_reason == "_x"
    assert (
        draft.IdleStateUpdateEndTurn.model_validate({"stopReason": "end_turn"}).stop_reason
        is draft.StopReason.END_TURN
    )


def test_constructed_variants_always_write_their_tags(draft: ModuleType) -> None:
    chunk = draft.SessionUpdateAgentMessageChunk(
        message_id="m", content=draft.ContentBlockText(text="t")
    )
    assert chunk.to_dict() == {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "t"},
    }
    idle = draft.SessionUpdateStateUpdateIdleEndTurn()
    assert idle.to_dict() == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert isinstance(idle, BaseModel)


def test_v1_tagless_variant_takes_what_the_tagged_ones_reject(v1: ModuleType) -> None:
    """v1 `AuthMethod` is `anyOf` [terminal (type: "terminal"), agent (no `type` at all)]: the
    schema accepts anything the agent option accepts, whatever its `type`; so does the model,
    keeping the payload."""
    adapter: TypeAdapter[Any] = TypeAdapter(v1.AuthMethod)
    terminal = adapter.validate_python({"type": "terminal", "id": "t", "name": "T"})
    assert type(terminal).__name__.startswith("AuthMethodTerminal")
    agent = adapter.validate_python({"id": "a", "name": "A"})
    assert type(agent) is v1.AuthMethodNone
    odd = {"type": "terminal", "id": "t", "name": "T", "args": [["not", "a", "string"]]}
    kept = adapter.validate_python(odd)
    assert type(kept) is v1.AuthMethodNone and kept.to_dict() == odd
    other = {"type": "_vendor", "id": "v", "name": "V"}
    assert adapter.validate_python(other).to_dict() == other


# --- `oneOf` over objects: exactly one alternative may fit (elicitation scopes) -------------------

_URL = {"mode": "url", "message": "m", "elicitationId": "e", "url": "https://example.com/x?q=1"}


@pytest.mark.parametrize(
    ("extra", "fits"),
    [
        ({"sessionId": "s"}, "CreateElicitationRequestUrlSession"),
        ({"sessionId": "s", "toolCallId": "t"}, "CreateElicitationRequestUrlSession"),
        ({"requestId": 7}, "CreateElicitationRequestUrlRequest"),
        ({"requestId": "r-1"}, "CreateElicitationRequestUrlRequest"),
        ({"requestId": None}, None),  # RequestId is not nullable in this revision
        ({"sessionId": "s", "requestId": 7}, None),  # both scopes: `oneOf` allows one
        ({}, None),  # neither scope
    ],
)
def test_one_of_scopes_accept_exactly_one(
    draft: ModuleType, extra: dict[str, Any], fits: str | None
) -> None:
    import jsonschema

    raw = json.dumps({**_URL, **extra})
    schema = load(PINNED["acp_v2_draft"])
    reference = {"$defs": schema["$defs"], "$ref": "#/$defs/CreateElicitationRequest"}
    valid = jsonschema.Draft202012Validator(reference).is_valid(json.loads(raw))
    assert valid == (fits is not None)  # the reference validator agrees with the expectation
    adapter = TypeAdapter(draft.CreateElicitationRequest)
    if fits is None:
        with pytest.raises(ValidationError):
            adapter.validate_json(raw)
        return
    model = adapter.validate_json(raw)
    assert type(model).__name__ == fits
    assert same_json(
        json.loads(adapter.dump_json(model, by_alias=True, exclude_unset=True)), json.loads(raw)
    )


def test_one_of_scopes_reject_both_scopes_on_unknown_modes_too(draft: ModuleType) -> None:
    adapter = TypeAdapter(draft.CreateElicitationRequest)
    raw = {"mode": "_vendor_mode", "message": "m", "sessionId": "s"}
    assert type(adapter.validate_python(raw)).__name__ == "UnknownCreateElicitationRequestSession"
    with pytest.raises(ValidationError, match="exactly one"):
        adapter.validate_python({**raw, "requestId": "r"})
