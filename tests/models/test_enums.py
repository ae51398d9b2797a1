"""Open and closed string enums: named constants with the schema's docs, any string kept by an
open enum and equal to the plain string, `is_known` / `is_extension` / `is_reserved`, no
non-strings; closed enums take their known values only."""

from __future__ import annotations

import ast
import inspect
import itertools
import json
from types import ModuleType
from typing import Any

import pytest
from models_facts import PINNED, enums, load
from pydantic import BaseModel, TypeAdapter, ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


def _enum_facts(target: str) -> dict[str, Any]:
    return enums(load(PINNED[target]))


def _docstrings(pkg: ModuleType) -> dict[tuple[str, str], str]:
    """(class, constant) -> the docstring under the constant in the generated enums.py."""
    tree = ast.parse(inspect.getsource(pkg.enums))
    out = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        body = cls.body
        for stmt, nxt in itertools.pairwise(body):
            documented = (
                isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            )
            if documented and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                out[(cls.name, stmt.target.id)] = nxt.value.value
    return out


def _descriptions(target: str, name: str) -> dict[str, str]:
    schema = load(PINNED[target])["$defs"][name]
    return {
        o["const"]: o["description"]
        for o in schema.get("anyOf") or schema.get("oneOf") or ()
        if "const" in o and "description" in o
    }


def test_constants_carry_the_schema_descriptions(pinned: ModuleType) -> None:
    target = pinned.__name__
    docs = _docstrings(pinned)
    counted = 0
    for name, fact in _enum_facts(target).items():
        cls = getattr(pinned, name)
        descriptions = _descriptions(target, name)
        for value in fact.values:
            const = next(c for c in dir(cls) if c.isupper() and getattr(cls, c) == value)
            member = getattr(cls, const)
            assert type(member) is cls and member == value
            if value in descriptions:
                assert inspect.cleandoc(docs.get((name, const), "")) == inspect.cleandoc(
                    descriptions[value]
                ), (name, const)
                counted += 1
    assert counted > 20


@pytest.mark.parametrize("target", sorted(PINNED))
def test_open_enums_keep_any_string(target: str, request: pytest.FixtureRequest) -> None:
    pkg = request.getfixturevalue(
        {"acp_v2_draft": "draft", "acp_v2": "stable", "acp_v1": "v1"}[target]
    )
    open_enums = [n for n, f in _enum_facts(target).items() if f.open]
    assert open_enums
    for name in open_enums:
        cls = getattr(pkg, name)
        adapter: TypeAdapter[Any] = TypeAdapter(cls)
        for raw in ("_vendor_kind", "future_kind", "", "Ünïcode value", "end_turn "):
            value = adapter.validate_json(json.dumps(raw))
            assert isinstance(value, cls) and isinstance(value, str)
            assert (
                value == raw
                and str(value) == raw
                and value.value == raw
                and hash(value) == hash(raw)
            )
            assert {raw: 1}[value] == 1
            assert not value.is_known
            assert value.is_extension is raw.startswith("_")
            assert value.is_reserved is not raw.startswith("_")
            assert adapter.dump_json(value) == json.dumps(raw, ensure_ascii=False).encode()
            assert json.loads(adapter.dump_json(adapter.validate_python(raw))) == raw
        for known in cls.known_values():
            value = adapter.validate_python(known)
            assert value is getattr(
                cls, next(c for c in dir(cls) if c.isupper() and getattr(cls, c) == known)
            )
            assert value.is_known and not value.is_extension and not value.is_reserved
        for bad in (5, None, 1.5, True, ["x"], {"x": 1}, b"bytes"):
            with pytest.raises(ValidationError):
                adapter.validate_python(bad)
        for bad_json in ("5", "null", '["x"]'):
            with pytest.raises(ValidationError):
                adapter.validate_json(bad_json)


def test_closed_enums_reject_unknown_values(pinned: ModuleType) -> None:
    closed = [n for n, f in _enum_facts(pinned.__name__).items() if not f.open]
    assert closed
    for name in closed:
        cls = getattr(pinned, name)
        adapter: TypeAdapter[Any] = TypeAdapter(cls)
        assert cls.__acp_open__ is False
        for known in cls.known_values():
            assert adapter.validate_json(json.dumps(known)).is_known
        for bad in ("_vendor_kind", "future_kind", "", 5, None):
            with pytest.raises(ValidationError):
                adapter.validate_python(bad)


def test_open_enum_in_a_model(draft: ModuleType) -> None:
    entry = draft.PlanEntry.model_validate(
        {"content": "c", "priority": "_urgent", "status": "in_progress"}
    )
    assert entry.priority == "_urgent" and entry.priority.is_extension
    assert entry.status is draft.PlanEntryStatus.IN_PROGRESS
    assert entry.to_dict() == {"content": "c", "priority": "_urgent", "status": "in_progress"}
    made = draft.PlanEntry(content="c", priority=draft.PlanEntryPriority.HIGH, status="completed")
    assert made.status == draft.PlanEntryStatus.COMPLETED and isinstance(
        made.status, draft.PlanEntryStatus
    )
    assert made.to_json() == '{"content":"c","priority":"high","status":"completed"}'
    with pytest.raises(ValidationError):
        draft.PlanEntry.model_validate({"content": "c", "priority": 3, "status": "pending"})
    assert isinstance(entry, BaseModel)


def test_closed_enum_in_a_model(draft: ModuleType, v1: ModuleType) -> None:
    ok = draft.ElicitationSchema.model_validate({"type": "object", "properties": {}})
    assert ok.type is draft.ElicitationSchemaType.OBJECT
    with pytest.raises(ValidationError):
        draft.ElicitationSchema.model_validate({"type": "array", "properties": {}})
    with pytest.raises(ValidationError):  # required in the draft
        draft.ElicitationSchema.model_validate({"properties": {}})
    default = v1.ElicitationSchema.model_validate({})  # v1: `"default": "object"`
    assert default.type is v1.ElicitationSchemaType.OBJECT  # the schema default, as the enum
    assert default.to_dict() == {}
    assert isinstance(default.properties, dict)
