"""Serializers of generated classes (`serialization_schema` in `_serialize.py`): unions of models write
each value with its own class's serializer. Output must equal the reference (pydantic's serializer
built from the class's own core schema) byte for byte, with every dump option, for parsed models,
models built in Python and models changed by assignment. The differential check
(`models_differential.py`) compares both on every generated instance and accepted mutant too."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from acp_runtime.models.serialize import serialization_schema
from models_instances import same_json
from models_serializers import differences, reference
from pydantic import BaseModel, TypeAdapter
from pydantic_core import SchemaSerializer

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned

DRAFT_UPDATES: list[dict[str, Any]] = [
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "hi", "_meta": {"k": 1}},
    },
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m2",
        "content": {
            "type": "text",
            "text": 'é "q" 🙂',
            "annotations": {"audience": ["user", "_bot"], "priority": 0.5},
        },
    },
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m3",
        "content": {"type": "_vendor_blob", "bytes": "AA==", "n": 1.5},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "kind": "edit",
        "title": None,
        "content": [
            {"type": "content", "content": {"type": "text", "text": "out"}},
            {"type": "terminal", "terminalId": "t", "x": [1]},
            {"type": "_future", "a": None},
        ],
        "locations": [{"path": "/p", "line": 2, "column": 9}],
        "rawInput": {"a": [1, 2.0, -0.0, None, True]},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": 5,
    },  # leniency repair: title dropped
    {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "p",
            "entries": [{"content": "c", "priority": "_urgent", "status": "pending"}],
        },
    },
    {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
        "usage": {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0},
    },
    {"sessionUpdate": "state_update", "state": "idle"},
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": None},
    {"sessionUpdate": "state_update", "state": "running", "futureField": {"deep": 2**63 - 1}},
    {
        "sessionUpdate": "_vendor_update",
        "x": 1,
        "content": {"type": "text", "text": "t"},
        "_meta": None,
    },
]

V1_UPDATES: list[dict[str, Any]] = [
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "hi"},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "in_progress",
        "title": "Read",
        "kind": "read",
        "content": [{"type": "content", "content": {"type": "text", "text": "t"}}],
        "locations": [{"path": "/p", "line": 1}],
    },
    {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "completed"}],
    },
    {
        "sessionUpdate": "usage_update",
        "used": 10,
        "size": 200000,
        "cost": {"amount": 0.1234, "currency": "USD"},
    },
]


def _parsed(pkg: ModuleType, cls: str, update: dict[str, Any]) -> BaseModel:
    model: BaseModel = getattr(pkg, cls).from_json(
        json.dumps({"sessionId": "s", "update": update, "_meta": {"m": [1]}})
    )
    return model


@pytest.mark.parametrize("update", DRAFT_UPDATES, ids=lambda u: json.dumps(u)[:50])
def test_parsed_draft_notifications_serialize_as_the_reference(
    draft: ModuleType, update: dict[str, Any]
) -> None:
    note = _parsed(draft, "UpdateSessionNotification", update)
    assert not differences(note), "\n".join(differences(note))
    assert not differences(note.update), "\n".join(differences(note.update))
    wire = reference(type(note)).to_json(note, by_alias=True, exclude_unset=True)
    assert note.to_json().encode() == wire
    assert TypeAdapter(type(note)).dump_json(note, by_alias=True, exclude_unset=True) == wire
    assert note.to_dict() == json.loads(wire)


@pytest.mark.parametrize("update", V1_UPDATES, ids=lambda u: u["sessionUpdate"])
def test_parsed_v1_notifications_serialize_as_the_reference(
    v1: ModuleType, update: dict[str, Any]
) -> None:
    note = _parsed(v1, "SessionNotification", update)
    assert not differences(note), "\n".join(differences(note))
    assert same_json(json.loads(note.to_json())["update"], update)


def test_models_built_in_python_serialize_as_the_reference(draft: ModuleType) -> None:
    text = draft.ContentBlockText(text="hi")
    by_name = draft.UpdateSessionNotification(
        session_id="s", update=draft.SessionUpdateAgentMessageChunk(content=text, message_id="m")
    )
    by_alias = draft.UpdateSessionNotification.model_validate(
        {
            "sessionId": "s",
            "update": draft.SessionUpdateToolCallUpdate(
                toolCallId="c",
                title=None,
                content=[
                    draft.ToolCallContentContent(content=draft.ContentBlockText(text="x")),
                ],
            ),
        }
    )
    for note in (by_name, by_alias):
        assert not differences(note), "\n".join(differences(note))
    assert by_name.to_dict() == {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
            "messageId": "m",
        },
    }
    assert by_alias.to_dict()["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": None,
        "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
    }


def test_models_changed_by_assignment_serialize_as_the_reference(draft: ModuleType) -> None:
    note = _parsed(draft, "UpdateSessionNotification", DRAFT_UPDATES[3])
    update = note.update
    update.title = "now set"
    update.locations = None
    update.content[0].content = draft.ContentBlockImage(data="AA==", mime_type="image/png")
    update.content.append(draft.ToolCallContentTerminal(terminal_id="t2"))
    note.session_id = "other"
    assert not differences(note), "\n".join(differences(note))
    out = note.to_dict()
    assert out["sessionId"] == "other"
    assert out["update"]["title"] == "now set" and out["update"]["locations"] is None
    assert out["update"]["content"][0]["content"] == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
    }
    assert out["update"]["content"][-1] == {"type": "terminal", "terminalId": "t2"}
    note.update = draft.SessionUpdateStateUpdateRunning()  # another variant of the union
    assert not differences(note), "\n".join(differences(note))
    assert note.to_dict()["update"] == {"sessionUpdate": "state_update", "state": "running"}


def test_unexpected_values_in_a_union_field_are_written_like_the_reference(
    draft: ModuleType,
) -> None:
    """Not valid, but assignment does not validate: a dict or a foreign model in a union field."""
    note = _parsed(draft, "UpdateSessionNotification", DRAFT_UPDATES[0])
    note.update.content = {"type": "text", "text": "raw dict"}
    assert note.to_dict()["update"]["content"] == {"type": "text", "text": "raw dict"}
    assert json.loads(note.to_json()) == json.loads(
        reference(type(note)).to_json(note, by_alias=True, exclude_unset=True, warnings=False)
    )


def test_every_class_with_a_union_of_models_has_a_rebuilt_serializer(pinned: ModuleType) -> None:
    from acp_runtime.models import serialize as base

    rebuilt = 0
    for name in pinned.__all__:
        cls = getattr(pinned, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls in (
            pinned.AcpModel,
            pinned.TaggedModel,
        ):
            continue
        assert isinstance(cls.__pydantic_serializer__, SchemaSerializer)
        changed = base.serialization_schema(cls.__pydantic_core_schema__)
        if changed is not cls.__pydantic_core_schema__:
            rebuilt += 1
            assert TypeAdapter(cls).serializer is cls.__pydantic_serializer__
            assert "'type': 'any'" in repr(changed)
    assert rebuilt > 20


def _unions(node: Any, seen: set[int] | None = None) -> list[dict[str, Any]]:
    """Every union node of a core schema."""
    seen = set() if seen is None else seen
    found: list[dict[str, Any]] = []
    if isinstance(node, (list, tuple)):
        for item in node:
            found += _unions(item, seen)
    elif isinstance(node, dict) and id(node) not in seen:
        seen.add(id(node))
        if node.get("type") in ("union", "tagged-union"):
            found.append(node)
        for key, value in node.items():
            if key not in ("cls", "metadata", "config", "default", "expected", "serialization"):
                found += _unions(value, seen)
    return found


def test_serialization_schema_leaves_other_unions_alone(draft: ModuleType) -> None:
    """`int | float` keeps its serializer; a tagged union of models gets inference."""
    schema = draft.Annotations.__pydantic_core_schema__
    assert serialization_schema(schema) is schema
    changed = serialization_schema(draft.SessionUpdateAgentMessageChunk.__pydantic_core_schema__)
    assert changed is not draft.SessionUpdateAgentMessageChunk.__pydantic_core_schema__
    kinds = {(u["type"], u.get("serialization", {}).get("type")) for u in _unions(changed)}
    assert ("tagged-union", "any") in kinds and ("union", None) in kinds
    for union in _unions(changed):
        # `chain`: JSON Schema's integer (`_jsonint`: a strict int, or a float made an int)
        scalar = union["type"] == "union" and all(
            c.get("type") in ("int", "float", "chain") for c in union["choices"]
        )
        assert ("serialization" in union) is not scalar
    assert not any(
        "serialization" in u
        for u in _unions(draft.SessionUpdateAgentMessageChunk.__pydantic_core_schema__)
    )
