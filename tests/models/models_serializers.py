"""The serializers of generated classes against the reference: what pydantic builds from a class's
own core schema (unions serialized by picking their option), the path every class had before
`serialization_schema` (see the packages' `_serialize.py`). Used by the serialization tests and the
differential check: both must write the same bytes and the same Python data, with every option.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic._internal._config import ConfigWrapper
from pydantic.version import VERSION
from pydantic_core import SchemaSerializer

# pydantic-core of pydantic 2.13 and later can build a serializer without reusing the serializers of
# the (complete) classes it meets; before, it reuses them (the generated ones, not the reference).
_NO_PREBUILT_OPTION = tuple(int(p) for p in VERSION.split(".")[:2]) >= (2, 13)

_REFERENCE: dict[type[BaseModel], SchemaSerializer] = {}

# Dump options compared: the wire form first (what `to_json()` and the benchmark use).
OPTIONS: tuple[dict[str, Any], ...] = (
    {"by_alias": True, "exclude_unset": True},
    {},
    {"by_alias": False},
    {"exclude_none": True},
    {"exclude_defaults": True, "by_alias": True},
    {"round_trip": True},
    {"include": {"update": True, "session_id": True}, "exclude_unset": True},
    {"exclude": {"update": {"content"}}, "by_alias": True},
)


def reference(cls: type[BaseModel]) -> SchemaSerializer:
    """The serializer pydantic builds for `cls` from its core schema, nested classes included."""
    found = _REFERENCE.get(cls)
    if found is None:
        config = ConfigWrapper(cls.model_config).core_config(title=cls.__name__)
        schema = cls.__pydantic_core_schema__
        if _NO_PREBUILT_OPTION:
            found = SchemaSerializer(schema, config, _use_prebuilt=False)
        else:  # it reuses only the serializers of classes that read as complete: none, meanwhile
            classes = [
                c for c in set(_model_classes(schema)) if c.__dict__.get("__pydantic_complete__")
            ]
            for c in classes:
                c.__pydantic_complete__ = False
            try:
                found = SchemaSerializer(schema, config)
            finally:
                for c in classes:
                    c.__pydantic_complete__ = True
        _REFERENCE[cls] = found
    return found


def _model_classes(schema: Any) -> Iterator[type]:
    """The classes of the model schemas in a core schema (an iterative walk)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "model" and isinstance(node.get("cls"), type):
                yield node["cls"]
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def differences(obj: BaseModel, options: tuple[dict[str, Any], ...] = OPTIONS) -> list[str]:
    """How the class's serializer and the reference disagree on `obj` (empty: they agree).

    JSON must be the same bytes; Python output (both modes) must be equal with the same types.
    """
    cls = type(obj)
    ours, ref = cls.__pydantic_serializer__, reference(cls)
    out = []
    for kwargs in options:
        for how in ("json", "python/json", "python"):
            a, b = (_dump(serializer, obj, how, kwargs) for serializer in (ours, ref))
            if a != b:
                out.append(f"{cls.__name__} {how} {kwargs}:\n  ours: {a!r}\n  ref:  {b!r}")
    return out


def _dump(serializer: SchemaSerializer, obj: BaseModel, how: str, kwargs: dict[str, Any]) -> Any:
    try:
        if how == "json":
            return serializer.to_json(obj, **kwargs)
        return _typed(
            serializer.to_python(obj, mode="json" if how == "python/json" else "python", **kwargs)
        )
    except Exception as exc:  # noqa: BLE001  # both must fail alike too
        return f"raised {type(exc).__name__}: {exc}"


def _typed(value: Any) -> Any:
    """`value` with the type of every leaf (so `1 == 1.0 == True` or str vs str subclass differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__qualname__, value)
