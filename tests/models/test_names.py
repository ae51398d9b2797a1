"""Stable names: classes are named from `$defs` keys, union name + tag value, `Unknown<Union>`,
or an alternative's title, never from positions; fields are snake_case with the wire name as
alias and accept either name.

Across consecutive revisions, every class whose definition did not change (its `$defs` JSON,
descriptions aside, and that of every definition it refers to) keeps its name and its shape.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import json
import keyword
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from models_facts import PINNED, SHARED, ir, load, pascal, snake
from models_instances import NONE, Instances
from pydantic import BaseModel, ValidationError

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned

# Consecutive revisions of each schema file, oldest first (manifest order within a source).
GIT = [
    "git-b4edad80",
    "git-7b8a7094",
    "git-a57b538d",
    "git-a90d7e3a",
    "git-2d03ff31",
    "git-9ac13511",
    "git-bb2ef8f7",
]
NPM = ["npm-1.8.0", "npm-2.0.0", "npm-2.1.0", "npm-2.2.0", "npm-2.4.0"]


def _pairs() -> list[tuple[Path, Path]]:
    out = []
    for series, names in (
        (GIT, ("schema.unstable.json", "schema.json")),
        (NPM, ("schema.unstable.json", "schema.json", "v1.schema.json")),
    ):
        for name in names:
            files = [SHARED / rev / name for rev in series if (SHARED / rev / name).is_file()]
            out.extend(itertools.pairwise(files))
    return out


PAIRS = _pairs()
# The pairs the generated packages themselves are compared on (rendered and imported).
PACKAGE_PAIRS = [
    (
        SHARED / "git-9ac13511" / "schema.unstable.json",
        SHARED / "git-bb2ef8f7" / "schema.unstable.json",
    ),
    (SHARED / "npm-2.2.0" / "schema.unstable.json", SHARED / "npm-2.4.0" / "schema.unstable.json"),
    (SHARED / "npm-2.2.0" / "v1.schema.json", SHARED / "npm-2.4.0" / "v1.schema.json"),
]


def _label(pair: tuple[Path, Path]) -> str:
    return f"{pair[0].parent.name}->{pair[1].parent.name}/{pair[1].name}"


def _strip_docs(value: Any, names: bool = False) -> Any:
    """A schema without its documentation keywords (`names`: `value` maps property names)."""
    if isinstance(value, dict):
        return {
            k: _strip_docs(v, k in ("properties", "$defs") and not names)
            for k, v in value.items()
            if names or k not in ("description", "$comment", "examples")
        }
    if isinstance(value, list):
        return [_strip_docs(v) for v in value]
    return value


def _refs(value: Any) -> set[str]:
    if isinstance(value, dict):
        out = {value["$ref"].rsplit("/", 1)[-1]} if isinstance(value.get("$ref"), str) else set()
        for v in value.values():
            out |= _refs(v)
        return out
    if isinstance(value, list):
        return set().union(*(_refs(v) for v in value)) if value else set()
    return set()


def unchanged_definitions(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    """`$defs` keys whose JSON (descriptions aside) is the same in both documents, and so is the
    JSON of every definition they refer to, directly or not."""
    same = {
        k
        for k in old["$defs"].keys() & new["$defs"].keys()
        if _strip_docs(old["$defs"][k]) == _strip_docs(new["$defs"][k])
    }
    changed = True
    while changed:
        changed = False
        for key in list(same):
            if not _refs(old["$defs"][key]) <= same:
                same.discard(key)
                changed = True
    return same


def normalised(node: Any) -> Any:
    """An IR definition as plain data, without locations, documentation and field order."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: strip(v)
                for k, v in value.items()
                if k not in ("pointer", "description", "unstable")
            }
        if isinstance(value, (list, tuple)):
            return [strip(v) for v in value]
        return value

    data = strip(dataclasses.asdict(node))
    if "fields" in data:  # properties are a JSON object: their order is not part of the schema
        data["fields"] = sorted(data["fields"], key=lambda f: f["wire_name"])
    return data


def _origin(pointer: str) -> str | None:
    parts = pointer.split("/")
    return (
        parts[2].replace("~1", "/").replace("~0", "~")
        if len(parts) > 2 and parts[1] == "$defs"
        else None
    )


def _kept(old_path: Path, new_path: Path) -> list[Any]:
    """IR definitions of the old revision that come from unchanged `$defs` entries."""
    same = unchanged_definitions(load(old_path), load(new_path))
    return [d for d in ir(old_path).definitions if _origin(d.pointer) in same]


@pytest.mark.parametrize("pair", PAIRS, ids=_label)
def test_unchanged_definitions_keep_their_class_names_and_shapes(pair: tuple[Path, Path]) -> None:
    old_path, new_path = pair
    kept = _kept(old_path, new_path)
    assert kept, "no unchanged definitions: the comparison would prove nothing"
    new = ir(new_path)
    lost = [d.name for d in kept if new.get(d.name) is None]
    assert not lost, f"classes of unchanged definitions disappeared or were renamed: {lost}"
    reshaped = [d.name for d in kept if normalised(new.get(d.name)) != normalised(d)]
    assert not reshaped, f"classes of unchanged definitions changed shape: {reshaped}"


def _render(path: Path, package: str, out: Path) -> ModuleType:
    from acp_codegen.render.package import render_package

    target = out / package
    target.mkdir(parents=True)
    for name, text in render_package(ir(path), package, f"acp-codegen generate {package}").items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text, encoding="utf-8")
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return importlib.import_module(package)


@pytest.mark.parametrize("pair", PACKAGE_PAIRS, ids=_label)
def test_generated_packages_keep_classes_of_unchanged_definitions(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    old_path, new_path = pair
    tag = "".join(c if c.isalnum() else "_" for c in _label(pair)).lower()
    old_pkg = _render(old_path, f"names_old_{tag}", tmp_path)
    new_pkg = _render(new_path, f"names_new_{tag}", tmp_path)
    kept = _kept(old_path, new_path)
    assert len(kept) > 50
    for d in kept:
        assert hasattr(old_pkg, d.name), d.name
        assert hasattr(new_pkg, d.name), f"{d.name} is gone from the newer package"
        old_cls, new_cls = getattr(old_pkg, d.name), getattr(new_pkg, d.name)
        if isinstance(old_cls, type) and issubclass(old_cls, BaseModel):
            assert {n: f.alias for n, f in old_cls.model_fields.items()} == {
                n: f.alias for n, f in new_cls.model_fields.items()
            }, d.name
            assert [b.__name__ for b in old_cls.__mro__] == [
                b.__name__ for b in new_cls.__mro__
            ], d.name


def _reordered(value: Any) -> Any:
    """The same schema with every `anyOf`/`oneOf` and every `properties` in reverse order."""
    if isinstance(value, dict):
        out = {k: _reordered(v) for k, v in value.items()}
        for key in ("anyOf", "oneOf"):
            if isinstance(out.get(key), list):
                out[key] = out[key][::-1]
        if isinstance(out.get("properties"), dict) and all(
            isinstance(v, dict) for v in out["properties"].values()
        ):
            out["properties"] = dict(reversed(list(out["properties"].items())))
        return out
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@pytest.mark.parametrize("target", ["acp_v2_draft", "acp_v1"])
def test_class_names_do_not_depend_on_positions(target: str, tmp_path: Path) -> None:
    from acp_codegen.pipeline import ir_for

    doc = load(PINNED[target])
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(_reordered(doc)), encoding="utf-8")
    before = {d.name: _unordered(normalised(d)) for d in ir(PINNED[target]).definitions}
    after = {d.name: _unordered(normalised(d)) for d in ir_for(str(path)).definitions}
    assert (
        before.keys() == after.keys()
    ), f"only before: {sorted(before.keys() - after.keys())}; only after: {sorted(after.keys() - before.keys())}"
    moved = sorted(name for name in before if before[name] != after[name])
    assert not moved, f"names that now stand for other definitions: {moved}"


def _unordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unordered(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_unordered(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def test_variant_and_unknown_class_names(draft: ModuleType) -> None:
    protocol = ir(PINNED["acp_v2_draft"])
    assert draft.SessionUpdateNotice.__name__ == "SessionUpdateNotice"
    for union in (d for d in protocol.definitions if d.kind == "union" and d.def_name):
        for variant in union.variants:
            if variant.tag is not None:
                assert variant.target.rstrip("_") == union.name + pascal(variant.tag), (
                    union.name,
                    variant,
                )
        if union.unknown:
            assert union.unknown.rstrip("_") == "Unknown" + union.name
        assert all(hasattr(draft, v.target) for v in union.variants)


def _wire_fields(pkg: ModuleType) -> list[tuple[str, type[BaseModel], str, str]]:
    out = []
    for name in pkg.__all__:
        cls = getattr(pkg, name)
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            for py, info in cls.model_fields.items():
                out.append((name, cls, py, info.alias or py))
    return out


def test_field_names_are_snake_case_with_the_wire_name_as_alias(pinned: ModuleType) -> None:
    fields = _wire_fields(pinned)
    assert len(fields) > 500
    reserved = {
        "json",
        "copy",
        "dict",
        "schema",
        "validate",
        "construct",
        "to_json",
        "to_dict",
        "from_json",
        "from_dict",
    }
    for cls_name, _, py, wire in fields:
        expected = snake(wire)
        if keyword.iskeyword(expected) or expected in reserved or expected.startswith("model_"):
            expected += "_"
        assert py == expected, f"{cls_name}.{py} for wire name {wire!r}"
    assert ("meta", "_meta") in {(py, wire) for _, _, py, wire in fields}


def test_parsing_takes_wire_names_building_takes_python_names(draft: ModuleType) -> None:
    doc = load(PINNED["acp_v2_draft"])
    protocol = ir(PINNED["acp_v2_draft"])
    inst = Instances(doc)
    checked = 0
    for key in doc["$defs"]:
        definition = protocol.by_def_name(key)
        cls = getattr(draft, definition.name)
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            continue
        value = inst.valid(key, 0)
        if value is NONE or not isinstance(value, dict):
            continue
        by_wire = cls.model_validate(value)
        aliases = {info.alias or py: py for py, info in cls.model_fields.items()}
        python_named = {aliases.get(k, k): v for k, v in value.items()}
        if python_named != value and any(
            cls.model_fields[aliases[k]].is_required()
            for k in value
            if k in aliases and aliases[k] != k
        ):
            with pytest.raises(ValidationError):
                cls.model_validate(python_named)  # parsing: wire names only
        by_python = cls(
            **{
                aliases.get(k, k): getattr(by_wire, aliases[k]) if k in aliases else v
                for k, v in value.items()
            }
        )
        assert by_python.to_dict() == by_wire.to_dict() == json.loads(json.dumps(value)), key
        checked += 1
    assert checked > 100


def test_construct_by_python_name_or_wire_name(draft: ModuleType) -> None:
    a = draft.UpdateSessionNotification(
        session_id="s",
        update=draft.SessionUpdateAgentMessageChunk(
            message_id="m", content=draft.ContentBlockText(text="hi")
        ),
        meta={"k": 1},
    )
    b = draft.UpdateSessionNotification(
        sessionId="s",
        update={
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        },
        _meta={"k": 1},
    )
    assert (
        a.to_dict()
        == b.to_dict()
        == {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "hi"},
            },
            "_meta": {"k": 1},
        }
    )
    assert a.session_id == b.session_id == "s" and a.meta == b.meta == {"k": 1}
