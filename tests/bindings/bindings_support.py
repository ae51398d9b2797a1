"""What the bindings tests derive from the IR: builders, leniency sites, open enums and unions."""

from __future__ import annotations

import importlib
import json
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from models_facts import PINNED, ir, load
from models_instances import NONE, Instances
from pydantic import BaseModel, TypeAdapter, ValidationError

from acp_codegen.ir.builders import Builder
from acp_codegen.ir.dispatch import Dispatch, Fanout, dispatch_of
from acp_codegen.ir.nodes import Enum, Protocol, Ref, Struct, TaggedUnion, UnionOf
from acp_codegen.ir.spelling import all_fields

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")


def package(name: str) -> ModuleType:
    """A generated package, imported from generated/."""
    return importlib.import_module(name)


@cache
def protocol(name: str) -> Protocol:
    """The IR of a pinned package."""
    return ir(PINNED[name])  # type: ignore[no-any-return]


@cache
def instances(name: str) -> Instances:
    """Schema-valid instance generator of a pinned package's schema."""
    return Instances(load(PINNED[name]))


@cache
def context(name: str) -> Dispatch:
    """The dispatch API (builders, session handle) of a pinned package."""
    return dispatch_of(protocol(name))


def update_builders(name: str) -> tuple[Builder, ...]:
    """The session handle's builders."""
    handle = context(name).handle
    return handle.builders if handle else ()


def request_builders(name: str, side: str) -> dict[str, Builder]:
    """The builders of the methods `side` handles (sent by the other side), by handler name (a
    wire name can be a request and a notification at once)."""
    peer = next(p for p in context(name).peers if p.peer_side == side)
    return {m.name: m.builder for m in peer.methods if m.builder is not None}


def fanouts(name: str, side: str) -> tuple[Fanout, ...]:
    """The fanned-out notifications `side` handles."""
    return next(h for h in context(name).handlers if h.side == side).fanouts


def instances_by_class(name: str, seeds: int = 6) -> dict[type, list[dict[str, Any]]]:
    """Schema-valid wire instances of every definition, by the class they parse into (variants
    come from their unions' instances)."""
    return _by_class(name, seeds)


@cache
def _by_class(name: str, seeds: int) -> dict[type, list[dict[str, Any]]]:
    pkg = package(name)
    inst = instances(name)
    out: dict[type, list[dict[str, Any]]] = {}
    for key in inst.defs:
        definition = protocol(name).by_def_name(key)
        target = getattr(pkg, definition.name, None) if definition else None
        if target is None:
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(target)
        union = isinstance(definition, TaggedUnion)
        idle = 0  # a union's variants come up at random: stop once a run of tries adds nothing
        for seed in range(seeds * 40 if union else seeds):
            if idle >= seeds * 8:
                break
            idle += 1
            value = inst.valid(key, seed)
            if value is NONE or not isinstance(value, dict):
                continue
            try:
                parsed = adapter.validate_python(value)
            except ValidationError:
                continue
            found = out.setdefault(type(parsed), [])
            if len(found) < seeds:
                found.append(json.loads(json.dumps(value)))
                idle = 0
    return out


def field_values(model: BaseModel, names: tuple[str, ...]) -> dict[str, Any]:
    """The set fields of a parsed model among `names`, by Python name (values as parsed)."""
    return {n: getattr(model, n) for n in names if n in model.model_fields_set}


def build_kwargs(model: BaseModel) -> dict[str, Any]:
    """The model's set fields by Python name, and its unknown fields, as a constructor takes them."""
    return {
        **{n: getattr(model, n) for n in model.model_fields_set},
        **(model.__pydantic_extra__ or {}),
    }


def without_extras(model: BaseModel) -> dict[str, Any]:
    """The model's wire form without its top-level unknown fields."""
    data = model.to_dict()  # type: ignore[attr-defined]
    for key in model.__pydantic_extra__ or {}:
        data.pop(key, None)
    return data  # type: ignore[no-any-return]


def leniency_sites(name: str) -> list[tuple[Struct, str, str, str, bool]]:
    """(struct, Python name, wire name, rule, required) for every leniency hint of a package's structs."""
    proto = protocol(name)
    out = []
    for d in proto.definitions:
        if isinstance(d, Struct):
            for f in all_fields(d, proto):
                for rule in f.lenience:
                    out.append((d, f.py_name, f.wire_name, rule, f.required))
    return out


def enum_sites(name: str, open_: bool = True) -> dict[str, list[tuple[Struct, str, str]]]:
    """Open (or closed) enum -> (struct, Python name, wire name) of the fields typed by it (or by
    it | None)."""
    proto = protocol(name)
    out: dict[str, list[tuple[Struct, str, str]]] = {
        d.name: [] for d in proto.definitions if isinstance(d, Enum) and d.open == open_
    }
    for d in proto.definitions:
        if not isinstance(d, Struct):
            continue
        for f in all_fields(d, proto):
            t = f.type
            if isinstance(t, UnionOf):
                refs = [o for o in t.options if isinstance(o, Ref)]
                t = refs[0] if len(refs) == 1 else t
            if isinstance(t, Ref) and t.name in out and not f.tag:
                out[t.name].append((d, f.py_name, f.wire_name))
    return out


def open_unions(name: str) -> list[TaggedUnion]:
    """The tagged unions that keep unknown variants."""
    return [d for d in protocol(name).definitions if isinstance(d, TaggedUnion) and d.unknown]


def python_env() -> dict[str, str]:
    """Environment for a child Python that imports the generated packages."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "generated"), str(ROOT)])
    return env


PYTHON = sys.executable


def instance_for(name: str, cls: type[BaseModel]) -> dict[str, Any] | None:
    """A wire instance of `cls`: a schema instance of it, else one of another class with `cls`'s
    tags put in that `cls` accepts (deeply nested variants are rare in random union instances)."""
    by_class = instances_by_class(name)
    if by_class.get(cls):
        return by_class[cls][0]
    tags = {
        info.alias or py: info.default
        for py, info in cls.model_fields.items()
        if py in getattr(cls, "__acp_tags__", ()) and isinstance(info.default, str)
    }
    for values in by_class.values():
        for value in values:
            candidate = {**value, **{k: str.__str__(v) for k, v in tags.items()}}
            try:
                cls.model_validate(candidate)
            except ValidationError:
                continue
            return candidate
    return None
