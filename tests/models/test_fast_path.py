"""The fast validation path of generated classes (see `_fastschema.py`): present on every class, taken
by well-formed input, left for anything needing the full path, and never changing a result
(the differential test compares both paths on every generated instance and mutant too)."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


def _classes(pkg: ModuleType) -> list[type[BaseModel]]:
    return [
        c
        for n in pkg.__all__
        if isinstance(c := getattr(pkg, n), type)
        and issubclass(c, BaseModel)
        and c not in (pkg.AcpModel, pkg.TaggedModel)
    ]


def test_every_class_has_a_fast_path(pinned: ModuleType) -> None:
    classes = _classes(pinned)
    assert len(classes) > 150
    for cls in classes:
        validator = cls.__pydantic_validator__
        assert type(validator).__name__ == "FastPathValidator", cls.__name__
        assert validator.fast is not None, f"{cls.__name__} has only the full path"
        assert TypeAdapter(cls).validator is validator


WELL_FORMED = [
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "hi", "_meta": {"k": 1}},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "kind": "edit",
        "title": None,
        "content": [{"type": "content", "content": {"type": "text", "text": "out"}}],
        "locations": [{"path": "/p", "line": 2}],
        "rawInput": {"a": [1]},
    },
    {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "p",
            "entries": [{"content": "c", "priority": "low", "status": "pending"}],
        },
    },
    {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
        "usage": {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0},
    },
    {"sessionUpdate": "state_update", "state": "running"},
]
NEEDS_FULL_PATH = [
    {"sessionUpdate": "_vendor_update", "x": 1},  # unknown variant
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "_vendor_block"},
    },  # nested unknown variant
    {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "p",
            "entries": [{"content": "c", "priority": "_urgent", "status": "pending"}],
        },
    },  # unknown enum value
    {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": 5},  # leniency repair
    {"sessionUpdate": "state_update", "state": "idle"},  # no stop reason: the no-tag variant
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": None},
]


@pytest.mark.parametrize("update", WELL_FORMED, ids=lambda u: u["sessionUpdate"])
def test_well_formed_messages_take_the_fast_path(draft: ModuleType, update: dict[str, Any]) -> None:
    text = json.dumps({"sessionId": "s", "update": update})
    validator = draft.UpdateSessionNotification.__pydantic_validator__
    fast = validator.fast.validate_json(text)
    full = validator.full.validate_json(text)
    assert type(fast.update) is type(full.update)
    assert fast.to_json() == full.to_json()
    assert json.loads(fast.to_json()) == json.loads(text)
    assert fast.update.__pydantic_fields_set__ == full.update.__pydantic_fields_set__


@pytest.mark.parametrize("update", NEEDS_FULL_PATH, ids=lambda u: json.dumps(u)[:60])
def test_other_messages_take_the_full_path_with_the_same_result(
    draft: ModuleType, update: dict[str, Any]
) -> None:
    text = json.dumps({"sessionId": "s", "update": update})
    validator = draft.UpdateSessionNotification.__pydantic_validator__
    with pytest.raises(ValidationError):
        validator.fast.validate_json(text)
    both = draft.UpdateSessionNotification.model_validate_json(text)
    full = validator.full.validate_json(text)
    assert type(both.update) is type(full.update)
    assert both.to_json() == full.to_json()
    python = draft.UpdateSessionNotification.model_validate(json.loads(text))
    assert python.to_json() == full.to_json()
    plain = validator.validate_plain(json.loads(text))  # the dispatcher's call: the same
    assert type(plain.update) is type(full.update)
    assert plain.to_json() == full.to_json()


def test_invalid_input_reports_the_full_paths_errors(draft: ModuleType) -> None:
    text = json.dumps(
        {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "messageId": 1}}
    )
    validator = draft.UpdateSessionNotification.__pydantic_validator__
    with pytest.raises(ValidationError) as both:
        draft.UpdateSessionNotification.model_validate_json(text)
    with pytest.raises(ValidationError) as full:
        validator.full.validate_json(text)
    assert both.value.errors() == full.value.errors()
    with pytest.raises(ValidationError) as plain:
        validator.validate_plain(json.loads(text))
    assert plain.value.errors() == full.value.errors()


def test_construction_uses_the_full_path(draft: ModuleType) -> None:
    made = draft.SessionUpdateStateUpdateIdleCancelled(
        usage=draft.Usage(total_tokens=1, input_tokens=1, output_tokens=0)
    )
    assert made.to_dict() == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
        "usage": {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0},
    }
    validated = draft.SessionUpdateStateUpdateIdleCancelled.model_validate(
        {"usage": {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0}}
    )
    assert (
        validated.to_dict() == made.to_dict()
    )  # tags missing from the input: full path marks them set


def test_untagged_unions_keep_their_choice(draft: ModuleType) -> None:
    """A request envelope's `params` is an untagged union of every request: a prompt with an
    unknown content block must stay a PromptRequest, not become a looser match."""
    wire = {
        "id": 1,
        "method": "session/prompt",
        "params": {
            "sessionId": "s",
            "prompt": [{"type": "text", "text": "a"}, {"type": "_vendor_block", "n": 1}],
        },
    }
    request = draft.ClientRequest.model_validate_json(json.dumps(wire))
    full = draft.ClientRequest.__pydantic_validator__.full.validate_json(json.dumps(wire))
    assert type(request.params) is type(full.params) is draft.PromptRequest
    assert type(request.params.prompt[1]) is draft.UnknownContentBlock
    assert json.loads(request.to_json()) == wire


def test_validation_options_reach_both_paths(draft: ModuleType) -> None:
    """Options a caller sets are passed on (the common call without any takes a shorter way)."""
    cls = draft.UpdateSessionNotification
    validator = cls.__pydantic_validator__
    text = json.dumps({"sessionId": "s", "update": WELL_FORMED[0]})
    for kwargs in (
        {},
        {"strict": True},
        {"context": {"k": 1}},
        {"by_alias": True, "by_name": False},
        {"allow_partial": "off"},
    ):
        assert (
            validator.validate_json(text, **kwargs).to_json()
            == validator.full.validate_json(text, **kwargs).to_json()
        )
    by_name = {"session_id": "s", "update": {"sessionUpdate": "state_update", "state": "running"}}
    with pytest.raises(ValidationError):
        validator.validate_python(by_name, by_alias=True, by_name=False)
    assert validator.validate_python(by_name, by_alias=False, by_name=True).to_dict() == {
        "sessionId": "s",
        "update": {"sessionUpdate": "state_update", "state": "running"},
    }

    class Attributes:
        def __init__(self) -> None:
            self.session_id = "s"
            self.update = {"sessionUpdate": "state_update", "state": "running"}

    assert (
        validator.validate_python(Attributes(), from_attributes=True, by_name=True).to_dict()[
            "sessionId"
        ]
        == "s"
    )
    with pytest.raises(ValidationError):
        validator.validate_python(Attributes())
    with pytest.raises(TypeError):
        validator.validate_json(text, no_such_option=True)
    target = cls.model_construct()
    validator.validate_json(text, self_instance=target)  # construction-style call: the full path
    assert target.session_id == "s"
