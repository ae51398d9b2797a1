"""A validation call's `by_alias` / `by_name` reach every model of the value, also those below the
wrap validators of the generated models (which pydantic 2.12 and 2.13 do not pass them through)."""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from pydantic import ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned

USAGE = {"total_tokens": 1, "input_tokens": 1, "output_tokens": 0}
USAGE_WIRE = {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0}
IDLE = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}


def test_by_name_reaches_nested_models(draft: ModuleType) -> None:
    cls = draft.SessionUpdateStateUpdateIdleCancelled
    parsed = cls.model_validate({**IDLE, "usage": USAGE}, by_name=True)
    assert parsed.usage is not None and parsed.usage.total_tokens == 1
    from_json = cls.model_validate_json(json.dumps({**IDLE, "usage": USAGE}), by_name=True)
    assert from_json.to_dict() == parsed.to_dict() == {**IDLE, "usage": USAGE_WIRE}
    # without the option, Python names are not wire names: the lenient field drops the value
    assert cls.model_validate({**IDLE, "usage": USAGE}).usage is None


def test_by_alias_false_rejects_wire_names(draft: ModuleType) -> None:
    with pytest.raises(ValidationError):
        draft.Usage.model_validate(USAGE_WIRE, by_alias=False, by_name=True)
    with pytest.raises(ValidationError):
        draft.Usage.model_validate_json(json.dumps(USAGE_WIRE), by_alias=False, by_name=True)
    assert draft.Usage.model_validate(USAGE, by_alias=False, by_name=True).to_dict() == USAGE_WIRE
