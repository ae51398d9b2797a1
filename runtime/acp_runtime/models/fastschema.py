"""The fast validation path's core schema (`fast_schema`). Depends on pydantic and the standard
library.

Validation has two paths with one meaning. The *full* path is the pydantic schema of the classes
as written: Python hooks apply the leniency hints, pick union variants (unknown and missing tags
included), build open-enum values and mark tags as set. The *fast* path is derived from it once per
class (`fast_schema`): the same core schema with every hook taken out, so it accepts a subset of
what the full path accepts (well-formed input with known tags and known enum values) and builds
exactly the same objects. A class validates with the fast path first and, when that fails, with the
full path, whose result and errors are then the answer (`FastPathValidator`, in `models.fastpath`).
"""

from __future__ import annotations

from typing import Any

from pydantic_core import CoreSchema

from .hooks import NONE_TAG, UNKNOWN_TAG
from .openenum import _COERCE, OpenEnum


class _NoFastPath(Exception):
    """The schema holds a hook `fast_schema` does not know: the class keeps the full path only."""


# Keys of a core schema that hold nested schemas (everything else is copied as it is).
_SCHEMA_KEYS = frozenset(
    {
        "schema",
        "items_schema",
        "keys_schema",
        "values_schema",
        "extras_schema",
        "extras_keys_schema",
        "lax_schema",
        "strict_schema",
        "json_schema",
        "python_schema",
        "return_schema",
    }
)
_SCHEMA_LIST_KEYS = frozenset({"choices", "steps", "definitions", "items_schema"})


def _hook(schema: dict[str, Any]) -> Any:
    function = schema.get("function")
    return function.get("function") if isinstance(function, dict) else function


def fast_schema(schema: CoreSchema) -> CoreSchema:
    """The fast core schema of a generated class (see the module docstring).

    - a model's leniency wrap validator is dropped (it only acts on input the rest rejects, and
      on `null` in `default_on_null` fields, which the fast path therefore rejects);
    - an open enum's Python coercion becomes a literal of its known members (unknown values fail);
    - a tagged union picks its variant by the tag's wire name among the known tags only;
    - a variant needs its tags in the input instead of `model_post_init` marking them as set;
    - an untagged union (`StrictFirst`) keeps its full schema: an option narrowed by the above
      could let another option win, so inside it nothing is narrowed (its references point to
      the full definitions, which the fast schema carries as well);
    - anything else that calls Python makes the class keep the full path only (`_NoFastPath`).
    """
    out: CoreSchema = _FastSchema().build(schema)
    return out


_FAST_REF = ":fast"


class _FastSchema:
    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.kept_refs: set[str] = set()  # definitions referenced from kept (full) subtrees

    def build(self, schema: Any) -> Any:
        if schema.get("type") == "definitions":
            originals = list(schema["definitions"])
            out = {
                **schema,
                "schema": self.node(schema["schema"], None),
                "definitions": [self.node(d, None) for d in originals] + originals,
            }
            available = {d.get("ref") for d in originals}
        else:
            out = self.node(schema, None)
            available = set()
        if self.kept_refs - available:
            raise _NoFastPath("a kept union refers to an inlined definition")
        return out

    def node(self, node: Any, owner: Any) -> Any:
        if isinstance(node, list):
            return [self.node(item, owner) for item in node]
        if not isinstance(node, dict):
            return node
        done = self.memo.get(id(node))
        if done is None:
            done = self.memo[id(node)] = self._node(node, owner)
        return done

    def _node(self, node: dict[str, Any], owner: Any) -> dict[str, Any]:
        kind = node.get("type")
        hook = _hook(node) if isinstance(kind, str) and kind.startswith("function-") else None
        out: dict[str, Any]
        if kind == "definition-ref":
            return {**node, "schema_ref": node["schema_ref"] + _FAST_REF}
        if kind == "function-wrap" and getattr(hook, "__name__", None) == "_acp_lenient":
            out = dict(self.node(node["schema"], owner))
            out.pop("ref", None)
        elif kind == "function-wrap" and getattr(hook, "__acp_strict_first__", False):
            self._keep(node)
            out = dict(node)  # full semantics inside; only its own name changes
        elif kind == "function-after" and getattr(hook, "__func__", None) is _COERCE:
            enum: type[OpenEnum] = getattr(hook, "__self__")  # noqa: B009
            out = {"type": "literal", "expected": list(enum.__acp_members__.values())}
        elif kind == "tagged-union" and callable(node.get("discriminator")):
            wire = getattr(node["discriminator"], "__acp_tag__", None)
            if wire is None:
                raise _NoFastPath("foreign discriminator")
            out = {k: v for k, v in node.items() if k not in ("choices", "discriminator")}
            out["discriminator"] = wire
            out["choices"] = {
                tag: self.node(choice, owner)
                for tag, choice in node["choices"].items()
                if tag not in (UNKNOWN_TAG, NONE_TAG)
            }
        elif kind == "model":
            from .base import TaggedModel  # `models.base` imports this module: not at its top

            cls = node["cls"]
            if "post_init" in node and not (
                isinstance(cls, type)
                and issubclass(cls, TaggedModel)
                and cls.model_post_init is TaggedModel.model_post_init
            ):
                raise _NoFastPath("foreign model_post_init")
            out = {k: v for k, v in node.items() if k not in ("schema", "post_init")}
            out["schema"] = self.node(node["schema"], cls)
        elif kind == "model-fields":
            if node.get("computed_fields"):
                raise _NoFastPath("computed fields")
            out = {k: v for k, v in node.items() if k != "fields"}
            out["fields"] = {
                name: self._field(name, field, owner) for name, field in node["fields"].items()
            }
        elif hook is not None or kind in ("custom-error", "callable", "is-instance", "is-subclass"):
            if not getattr(hook, "__acp_keep__", False):
                raise _NoFastPath(f"{kind} hook")
            out = {k: (self.node(v, owner) if k in _SCHEMA_KEYS else v) for k, v in node.items()}
        else:
            out = {}
            for key, value in node.items():
                if key in _SCHEMA_KEYS or (key in _SCHEMA_LIST_KEYS and isinstance(value, list)):
                    out[key] = self.node(value, owner)
                elif key == "choices" and isinstance(value, dict):
                    out[key] = {tag: self.node(choice, owner) for tag, choice in value.items()}
                else:
                    out[key] = value
        if "ref" in node:
            out["ref"] = node["ref"] + _FAST_REF
        return out

    def _keep(self, node: Any) -> None:
        """Note the definitions a kept subtree refers to (they must be top-level definitions)."""
        if isinstance(node, dict):
            if node.get("type") == "definition-ref":
                self.kept_refs.add(node["schema_ref"])
            for key, value in node.items():
                if key not in ("metadata", "serialization", "default", "expected", "cls", "config"):
                    self._keep(value)
        elif isinstance(node, list):
            for item in node:
                self._keep(item)

    def _field(self, name: str, field: dict[str, Any], owner: Any) -> dict[str, Any]:
        out = dict(field)
        schema = self.node(field["schema"], owner)
        rules: dict[str, frozenset[str]] = getattr(owner, "__acp_lenient__", {})
        wire = field.get("validation_alias", name)
        if not isinstance(wire, str):
            raise _NoFastPath("alias path")
        tags: frozenset[str] = getattr(owner, "__acp_tags__", frozenset())
        if name in tags and schema.get("type") == "default":  # the tag must come from the input
            schema = schema["schema"]
        # `null` must take the full path (it is dropped)
        if "default_on_null" in rules.get(wire, ()):
            if schema.get("type") == "default" and schema["schema"].get("type") == "nullable":
                schema = {**schema, "schema": schema["schema"]["schema"]}
            elif schema.get("type") == "nullable" or (
                schema.get("type") == "default" and schema["schema"].get("type") in ("any", "union")
            ):
                raise _NoFastPath("nullable default_on_null field")
        out["schema"] = schema
        return out
