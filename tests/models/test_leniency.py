"""Leniency hints (`x-deserialize-default-on-error`, `-default-on-null`, `-skip-invalid-items`)
apply where the schema marks them and nowhere else; an unknown `x-deserialize-*` key is a
generation warning. (The differential test checks the "nowhere else" part on every definition:
an invalid value is only ever accepted with a hint on its path.)"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from models_facts import HINTS, PINNED, ROOT, ir, load
from pydantic import BaseModel, ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


def _hints_of(
    doc: dict[str, Any], schema: Any, seen: frozenset[str] = frozenset()
) -> dict[str, set[str]]:
    """wire name -> hints, for the properties of an object definition (and the definitions it
    extends through `allOf`)."""
    out: dict[str, set[str]] = {}
    if not isinstance(schema, dict):
        return out
    for part in schema.get("allOf") or ():
        if isinstance(part, dict) and isinstance(part.get("$ref"), str):
            key = part["$ref"].rsplit("/", 1)[-1]
            if key not in seen:
                for k, v in _hints_of(doc, doc["$defs"][key], seen | {key}).items():
                    out.setdefault(k, set()).update(v)
        else:
            for k, v in _hints_of(doc, part, seen).items():
                out.setdefault(k, set()).update(v)
    for prop, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            out[prop] = {name for hint, name in HINTS.items() if sub.get(hint)}
    return {k: v for k, v in out.items() if v}


def test_lenient_fields_are_exactly_the_marked_ones(pinned: ModuleType) -> None:
    path = PINNED[pinned.__name__]
    doc = load(path)
    protocol = ir(path)
    checked = 0
    for key, schema in doc["$defs"].items():
        definition = protocol.by_def_name(key)
        cls = getattr(pinned, definition.name)
        if definition.kind != "struct" or not (
            isinstance(cls, type) and issubclass(cls, BaseModel)
        ):
            continue
        rules = {k: set(v) for k, v in getattr(cls, "__acp_lenient__", {}).items()}
        assert rules == _hints_of(doc, schema), key
        checked += 1
    assert checked > 100


def test_default_on_error_drops_only_the_marked_field(draft: ModuleType) -> None:
    wire = {
        "toolCallId": "c",
        "title": 5,
        "kind": "read",
        "status": {"bad": True},
        "rawOutput": "kept",
    }
    call = draft.ToolCallUpdate.model_validate(wire)
    assert call.title is None and call.status is None
    assert call.to_dict() == {"toolCallId": "c", "kind": "read", "rawOutput": "kept"}
    with pytest.raises(ValidationError):  # toolCallId carries no hint
        draft.ToolCallUpdate.model_validate({**wire, "toolCallId": 5})
    with pytest.raises(ValidationError):  # nor does a text block's text
        draft.ContentBlockText.model_validate({"type": "text", "text": 5})


def test_default_on_error_does_not_make_a_required_field_optional(v1: ModuleType) -> None:
    assert v1.Plan.model_validate({"entries": []}).entries == []
    with pytest.raises(ValidationError):
        v1.Plan.model_validate({"entries": 5})  # dropped, then missing


def test_skip_invalid_items_drops_only_the_bad_items(draft: ModuleType) -> None:
    good = {"path": "/a", "line": 1}
    call = draft.ToolCallUpdate.model_validate(
        {"toolCallId": "c", "locations": [good, {"path": 5}, {"line": 2}, good]}
    )
    assert call.to_dict() == {"toolCallId": "c", "locations": [good, good]}
    with pytest.raises(ValidationError):  # `prompt` has no hint: one bad block fails the request
        draft.PromptRequest.model_validate(
            {
                "sessionId": "s",
                "prompt": [{"type": "text", "text": "ok"}, {"type": "text", "text": 5}],
            }
        )
    ok = draft.PromptRequest.model_validate(
        {"sessionId": "s", "prompt": [{"type": "text", "text": "ok"}]}
    )
    assert len(ok.prompt) == 1


def test_default_on_null_treats_null_as_omitted(draft: ModuleType) -> None:
    request = draft.NewSessionRequest.model_validate(
        {"cwd": "/w", "mcpServers": None, "additionalDirectories": None}
    )
    assert request.to_dict() == {"cwd": "/w"}
    assert request.mcp_servers is None or request.mcp_servers == []
    kept = draft.NewSessionRequest.model_validate(
        {"cwd": "/w", "mcpServers": [], "systemPrompt": None}
    )
    assert kept.to_dict() == {
        "cwd": "/w",
        "mcpServers": [],
        "systemPrompt": None,
    }  # nullable, no hint: kept
    with pytest.raises(ValidationError):  # no hint: null is invalid
        draft.PromptRequest.model_validate({"sessionId": "s", "prompt": None})
    with pytest.raises(ValidationError):  # the hint is about null, not about other errors
        draft.NewSessionRequest.model_validate({"cwd": "/w", "mcpServers": 5})


def test_lenient_repair_applies_inside_nested_models(draft: ModuleType) -> None:
    wire = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "title": ["x"],
            "content": [{"type": "content", "content": {"type": "text", "text": 1}}],
        },
    }
    note = draft.UpdateSessionNotification.model_validate_json(json.dumps(wire))
    assert note.to_dict() == {
        "sessionId": "s",
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": []},
    }


# -- generation warning ---------------------------------------------------------------------------


def _schema(hint: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Hints",
        "$defs": {
            "PingRequest": {
                "type": "object",
                "x-method": "ping",
                "x-side": "agent",
                "properties": {
                    "bar": {"type": ["string", "null"], hint: True},
                    "baz": {"type": ["string", "null"], "x-deserialize-default-on-error": True},
                },
            },
            "PingResponse": {
                "type": "object",
                "x-method": "ping",
                "x-side": "agent",
                "properties": {"ok": {"type": "boolean"}},
            },
        },
    }


def _generate(tmp_path: Path, hint: str, package: str) -> subprocess.CompletedProcess[str]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_schema(hint)), encoding="utf-8")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "generate",
            "--schema",
            str(schema),
            "--package",
            package,
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
    )


def _import(tmp_path: Path, package: str) -> ModuleType:
    sys.path.insert(0, str(tmp_path / "out"))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(tmp_path / "out"))


def test_unknown_leniency_hint_is_a_generation_warning(tmp_path: Path) -> None:
    done = _generate(tmp_path, "x-deserialize-frobnicate", "hints_unknown")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "x-deserialize-frobnicate" in line]
    assert len(warnings) == 1, done.stderr
    assert (
        "warning" in warnings[0] and "#/$defs/PingRequest/properties/bar" in warnings[0]
    ), warnings[0]
    assert "x-deserialize-default-on-error" not in done.stderr
    pkg = _import(tmp_path, "hints_unknown")
    assert pkg.PingRequest.__acp_lenient__ == {
        "baz": frozenset({"default_on_error"})
    }  # the unknown one is ignored
    with pytest.raises(ValidationError):
        pkg.PingRequest.model_validate({"bar": 5})
    assert pkg.PingRequest.model_validate({"bar": "b", "baz": 5}).to_dict() == {"bar": "b"}


def test_known_leniency_hints_do_not_warn(tmp_path: Path) -> None:
    done = _generate(tmp_path, "x-deserialize-default-on-null", "hints_known")
    assert done.returncode == 0, done.stderr
    assert "leniency" not in done.stderr and "warning" not in done.stderr.lower(), done.stderr
    pkg = _import(tmp_path, "hints_known")
    assert pkg.PingRequest.model_validate({"bar": None}).to_dict() == {}  # null -> as if omitted
    assert pkg.PingRequest.model_validate({"baz": None}).to_dict() == {"baz": None}  # no such hint
