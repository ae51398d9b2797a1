"""Nothing lost: unknown fields at every level, `null` apart from omitted on output, `uri` and
`date-time` strings byte for byte, ints as ints and floats as floats."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from models_instances import same_json
from pydantic import TypeAdapter

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


def _roundtrip(cls: Any, wire: dict[str, Any]) -> Any:
    obj = cls.from_json(json.dumps(wire))
    assert same_json(json.loads(obj.to_json()), wire), obj.to_json()
    assert same_json(obj.to_dict(), wire)
    assert same_json(cls.from_dict(wire).to_dict(), wire)
    return obj


def test_unknown_fields_are_kept_at_every_level(draft: ModuleType) -> None:
    wire = {
        "sessionId": "s",
        "futureTopLevel": {"a": [1, {"b": None}]},
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "futureUpdateField": "x",
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "t", "_vendorTextField": 1},
                    "extra": True,
                },
                {"type": "terminal", "terminalId": "term1", "_unknownTerminalField": [1.5]},
            ],
            "locations": [{"path": "/abs/p", "line": 3, "column": 9}],
            "_meta": {"vendor": {"nested": [{"deep": "value"}]}},
        },
    }
    note = _roundtrip(draft.UpdateSessionNotification, wire)
    assert note.model_extra == {"futureTopLevel": {"a": [1, {"b": None}]}}
    assert note.update.model_extra == {"futureUpdateField": "x"}
    assert note.update.content[0].content.model_extra == {"_vendorTextField": 1}
    assert note.update.locations[0].model_extra == {"column": 9}


def test_null_and_omitted_stay_apart(draft: ModuleType) -> None:
    base = {"sessionUpdate": "tool_call_update", "toolCallId": "c1"}
    for extra in (
        {},
        {"title": None},
        {"title": None, "kind": None, "_meta": None},
        {"title": "T", "content": None},
    ):
        wire = {"sessionId": "s", "update": {**base, **extra}}
        note = _roundtrip(draft.UpdateSessionNotification, wire)
        assert note.to_dict()["update"].keys() == {**base, **extra}.keys()
    made = draft.SessionUpdateToolCallUpdate(tool_call_id="c1", title=None)
    assert made.to_dict() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": None,
    }
    assert draft.SessionUpdateToolCallUpdate(tool_call_id="c1").to_dict() == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
    }
    assert made.title is None and made.kind is None  # same attribute, different wire form


@pytest.mark.parametrize(
    "uri",
    [
        "HTTPS://Example.COM:443/a/../b/%7euser?q=1&q=2#Frag",
        "file:///home/User/My%20Project/main.py",
        "urn:isbn:0451450523",
        "http://[::1]:8080/",
        "not a uri at all",
    ],
)
def test_uri_strings_are_not_normalised(draft: ModuleType, uri: str) -> None:
    _roundtrip(draft.ResourceLink, {"name": "n", "uri": uri})
    _roundtrip(draft.TextResourceContents, {"uri": uri, "text": "t"})
    link = draft.ResourceLink.from_json(json.dumps({"name": "n", "uri": uri}))
    assert type(link.uri) is str and link.uri == uri


@pytest.mark.parametrize(
    "stamp",
    [
        "2024-02-29T23:59:60Z",
        "2024-01-01T00:00:00.000000001+05:30",
        "2025-12-31t10:00:00z",
        "1999-01-01T00:00:00-00:00",
        "yesterday",
    ],
)
def test_date_time_strings_are_not_normalised(draft: ModuleType, stamp: str) -> None:
    info = _roundtrip(draft.SessionInfo, {"sessionId": "s", "cwd": "/w", "updatedAt": stamp})
    assert type(info.updated_at) is str and info.updated_at == stamp


def test_ints_stay_ints_and_floats_stay_floats(draft: ModuleType) -> None:
    for amount in (3, 3.0, 0, -0.0, 0.1, 1e300, 2**53 + 1, 123456789.125):
        cost = _roundtrip(draft.Cost, {"amount": amount, "currency": "USD"})
        assert type(cost.amount) is type(amount) and cost.amount == amount
    usage = _roundtrip(
        draft.Usage, {"totalTokens": 2**64 - 1, "inputTokens": 2**63, "outputTokens": 0}
    )
    assert type(usage.total_tokens) is int
    text = '{"amount":1.0,"currency":"EUR"}'
    assert draft.Cost.from_json(text).to_json() == text
    text = '{"amount":10000000000000000000000,"currency":"EUR"}'
    assert draft.Cost.from_json(text).to_json() == text
    annotations = _roundtrip(draft.Annotations, {"priority": 1})
    assert type(annotations.priority) is int
    annotations = _roundtrip(draft.Annotations, {"priority": 1.0})
    assert type(annotations.priority) is float


def test_any_typed_values_come_back_unchanged(draft: ModuleType) -> None:
    raw_input = {
        "list": [1, 1.0, -0.0, "s", None, True, {"x": [2**70]}],
        "empty": {},
        "unicode": "é\u2028🙂",
    }
    wire = {"toolCallId": "c", "rawInput": raw_input, "rawOutput": [raw_input, 5, 5.5]}
    call = _roundtrip(draft.ToolCallUpdate, wire)
    assert same_json(call.raw_input, raw_input)


def test_wire_text_survives_as_a_json_value(draft: ModuleType) -> None:
    text = (
        '{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p",'
        '"entries":[{"content":"a","priority":"high","status":"pending","_meta":null},'
        '{"content":"b","priority":"_vendor","status":"future_status","x":[]}]},"_meta":{}},"z":0.5}'
    )
    note = draft.UpdateSessionNotification.from_json(text)
    assert json.loads(note.to_json()) == json.loads(text)
    assert same_json(
        json.loads(
            TypeAdapter(draft.UpdateSessionNotification).dump_json(
                note, by_alias=True, exclude_unset=True
            )
        ),
        json.loads(text),
    )
