"""The serializers of the generated classes (`serialization_schema`, `build_serializer`).
Depends on pydantic and the standard library.

Serialization uses the classes' own core schema, with one change (`serialization_schema`): a
union whose options are all models writes a value with that value's own class serializer, as
pydantic's inference does, instead of first picking the option (a Python call of the
discriminator for tagged unions, and for JSON a detour through Python objects). The output is the
same; the class's serializer is rebuilt from that schema when it is completed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaSerializer

from .compat import NO_PREBUILT_OPTION
from .fastschema import _SCHEMA_KEYS, _SCHEMA_LIST_KEYS

_INFER: dict[str, Any] = {"type": "any"}  # `simple_ser_schema("any")`: pydantic's inference
_WRAPPERS = frozenset({"function-wrap", "function-before", "function-after"})


def serialization_schema(schema: CoreSchema) -> CoreSchema:
    """The core schema a generated class serializes with (see the module docstring).

    A union (tagged or not) whose options are all models, with no serializer of its own, gets
    pydantic's inference as its serializer: a model value is then written by its own class's
    serializer, with the same options (aliases, `exclude_unset`, include/exclude, mode), which is
    what the union's option for that class does. Everything else is left as it is. Returns the
    schema itself when it holds no such union.
    """
    walk = _SerSchema(schema)
    out: CoreSchema = walk.node(schema)
    return out if walk.changed else schema


class _SerSchema:
    def __init__(self, schema: Any) -> None:
        self.memo: dict[int, Any] = {}
        self.refs: dict[str, Any] = {}
        self.changed = False
        self._collect(schema, set())

    def _collect(self, node: Any, seen: set[int]) -> None:
        """Note every node with a `ref` (what `definition-ref`s point to)."""
        if isinstance(node, (list, tuple)):
            for item in node:
                self._collect(item, seen)
        elif isinstance(node, dict) and id(node) not in seen:
            seen.add(id(node))
            ref = node.get("ref")
            if isinstance(ref, str):
                self.refs[ref] = node
            for key, value in node.items():
                if key in _NAMED_SCHEMAS and isinstance(value, dict):
                    self._collect(list(value.values()), seen)
                elif _holds_schemas(key, value):
                    self._collect(value, seen)

    def node(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.node(item) for item in node]
        if isinstance(node, tuple):
            return tuple(self.node(item) for item in node)
        if not isinstance(node, dict):
            return node
        done = self.memo.get(id(node))
        if done is None:
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key in _NAMED_SCHEMAS and isinstance(value, dict):
                    out[key] = {name: self.node(item) for name, item in value.items()}
                elif _holds_schemas(key, value):
                    out[key] = self.node(value)
                else:
                    out[key] = value
            if (
                out.get("type") in ("union", "tagged-union")
                and "serialization" not in out
                and self._models_only(node)
            ):
                out["serialization"] = _INFER
                self.changed = True
            done = self.memo[id(node)] = out
        return done

    def _models_only(self, union: dict[str, Any], seen: frozenset[str] = frozenset()) -> bool:
        choices = union.get("choices")
        if isinstance(choices, dict):
            options = list(choices.values())
        elif isinstance(choices, list):
            options = [c[0] if isinstance(c, tuple) else c for c in choices]
        else:
            return False
        return bool(options) and all(self._is_model(option, seen) for option in options)

    def _is_model(self, node: Any, seen: frozenset[str]) -> bool:
        """The node validates to, and serializes as, an instance of a model class."""
        if not isinstance(node, dict) or "serialization" in node:
            return False
        kind = node.get("type")
        if kind == "model":
            return True
        if kind in _WRAPPERS:
            return self._is_model(node.get("schema"), seen)
        # a union nested in a union (variants split by a second tag)
        if kind in ("union", "tagged-union"):
            return self._models_only(node, seen)
        if kind == "definition-ref":
            ref = node.get("schema_ref")
            if not isinstance(ref, str) or ref in seen or ref not in self.refs:
                return False
            return self._is_model(self.refs[ref], seen | {ref})
        return False


_NAMED_SCHEMAS = frozenset({"choices", "fields"})  # keys whose dict maps names to schemas


def _holds_schemas(key: str, value: Any) -> bool:
    """A key of a core schema whose value is a nested schema or a list of them."""
    return (key in _SCHEMA_KEYS and isinstance(value, dict)) or (
        key in _SCHEMA_LIST_KEYS and isinstance(value, list)
    )


def _model_config(schema: Any, cls: type) -> Any:
    """The core config of `cls`'s own model schema (what pydantic built its serializer with)."""
    refs = (
        {d.get("ref"): d for d in schema.get("definitions", ())}
        if schema.get("type") == "definitions"
        else {}
    )
    node = schema.get("schema") if schema.get("type") == "definitions" else schema
    for _ in range(16):
        if not isinstance(node, dict):
            return None
        if node.get("type") == "definition-ref":
            node = refs.get(node.get("schema_ref"))
        elif node.get("type") == "model" and node.get("cls") is cls:
            return node.get("config")
        else:
            node = node.get("schema")
    return None


def build_serializer(cls: type[BaseModel]) -> SchemaSerializer | None:
    """The serializer of a generated class from its `serialization_schema` (None: no change).

    Nested models are built from the same (rewritten) schema, not reused from their classes, so
    the result does not depend on the order in which classes were completed.
    """
    schema = cls.__pydantic_core_schema__
    changed = serialization_schema(schema)
    if changed is schema:
        return None
    config = _model_config(schema, cls)
    # without the option (pydantic 2.11 and 2.12), nested complete classes' serializers are reused
    options: dict[str, Any] = {"_use_prebuilt": False} if NO_PREBUILT_OPTION else {}
    return SchemaSerializer(changed, config, **options)
