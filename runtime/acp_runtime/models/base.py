"""Shared machinery of the generated models: the base classes `AcpModel` and `TaggedModel`, and
`complete_models`, which builds a generated module's classes ahead of use. Depends on pydantic and
the standard library.

Classes are built at first use, not at import (`defer_build`): a class's validator, serializer
and fast path are made the first time it validates, serializes or is asked for its schema, and
building one class builds the schemas of the classes it contains into its own validator, not
theirs. pydantic serializes concurrent builds (its rebuild lock); the completion hook below runs
once per build, so every class ends with the same validator and serializer whichever thread or
task used it first.

The rest of the machinery lives in sibling modules: open enums (`models.openenum`), the full path's
validation hooks: union tags, field annotations and the schema's leniency hints (`models.hooks`),
the fast validation path (`models.fastschema`, `models.fastpath`) and the serializers
(`models.serialize`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import SchemaSerializer

from .annotations import evaluate_annotations
from .compat import CALLS_ON_COMPLETE
from .completion import completion_order, dependencies
from .deferred import BUILD_LOCK, UNBUILT, defer
from .fastpath import FastPathValidator
from .generated import chain_bound
from .hooks import lenient
from .serialize import build_serializer
from .strict import BUILDING

__all__ = ["AcpModel", "TaggedModel", "complete_models", "wire_name"]


def wire_name(name: str) -> str:
    """The wire name of a field that states no alias: `session_id` -> `sessionId` (a trailing
    `_`, which keeps a name off a keyword, is dropped: `from_` -> `from`). The generator writes
    an alias for every field whose wire name is not this one."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class AcpModel(BaseModel):
    """Base of every generated model: unknown fields kept, wire names on output, `null` != omitted.

    Parsing (`from_json`, `from_dict`, `model_validate*`) takes wire names only and applies the
    schema's leniency hints; building (the constructor, `model_copy(update=...)`) is strict and
    takes Python names too (see `models.strict`).
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=False,
        validate_by_alias=True,
        serialize_by_alias=True,
        alias_generator=wire_name,  # fields without an alias: `session_id` is `sessionId`
        defer_build=True,  # built at first use: importing the models builds no validator
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # before pydantic reads the annotations and collects validators (its metaclass does
        # both after `type.__new__`, which calls this)
        evaluate_annotations(cls)
        # the schema's leniency hints (wire name -> rules, inherited fields included): a class that
        # states its own gets the validator that applies them
        if "__acp_lenient__" in vars(cls):
            cls._acp_lenient = _lenient_validator()  # type: ignore[attr-defined]
        super().__init_subclass__(**kwargs)

    def __init__(self, /, **data: Any) -> None:
        """Build a value in Python: strict, Python or wire names (see `models.strict`)."""
        token = BUILDING.set(True)
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self, by_name=True)
        finally:
            BUILDING.reset(token)

    # Not a custom `__init__` for pydantic: nested values are still validated by the schema.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; the `update` values (Python or wire names) are validated as when building."""
        copied = super().model_copy(deep=deep)
        if not update:
            return copied
        data = {name: getattr(copied, name) for name in copied.model_fields_set}
        data.update(copied.__pydantic_extra__ or {})
        data.update(update)
        return type(self)(**data)

    def to_dict(self) -> dict[str, Any]:
        """The wire form as JSON-ready data: aliases, only fields that were set (or parsed)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def to_json(self) -> str:
        """The wire form as compact JSON text."""
        return (
            type(self)
            .__pydantic_serializer__.to_json(self, by_alias=True, exclude_unset=True)
            .decode()
        )

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> Self:
        """Parse wire JSON text."""
        return cls.model_validate_json(data)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Validate already-parsed wire data."""
        return cls.model_validate(data)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Make reading the class's schema, validator or serializer build it.

        See `models.deferred`.
        """
        super().__pydantic_init_subclass__(**kwargs)
        defer(cls)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        """Pydantic's `model_rebuild`, the completion hook included, under `BUILD_LOCK`."""
        depth = _parent_namespace_depth + 1 if _parent_namespace_depth > 0 else 0  # this frame
        with BUILD_LOCK:
            was_complete = cls.__pydantic_complete__
            rebuilt = super().model_rebuild(
                force=force,
                raise_errors=raise_errors,
                _parent_namespace_depth=depth,
                _types_namespace=_types_namespace,
            )
            # pydantic 2.11 has no completion hook, and later ones skip it on a forced rebuild of
            # a complete class, which would leave it pydantic's validator and serializer
            if rebuilt and (was_complete or not CALLS_ON_COMPLETE):
                cls.__pydantic_on_complete__()
            return rebuilt

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        """Give the class its fast validation path and its serializer (each time pydantic builds it,
        which for these deferred classes is at first use)."""
        validator = cls.__dict__.get("__pydantic_validator__")
        if validator is not None and not isinstance(validator, FastPathValidator):
            cls.__pydantic_validator__ = FastPathValidator(cls, validator)  # type: ignore[assignment]
        if isinstance(cls.__dict__.get("__pydantic_serializer__"), SchemaSerializer):
            serializer = build_serializer(cls)
            if serializer is not None:
                cls.__pydantic_serializer__ = serializer


def _lenient_validator() -> Any:
    """A wrap model validator applying `cls.__acp_lenient__` (a new one per class: pydantic keeps
    each class's validators by name, a subclass's replacing its base's)."""

    def _acp_lenient(cls: type[AcpModel], data: Any, handler: Callable[[Any], Any]) -> Any:
        rules: dict[str, frozenset[str]] = getattr(cls, "__acp_lenient__")  # noqa: B009
        return lenient(cls, data, handler, rules)

    return model_validator(mode="wrap")(classmethod(_acp_lenient))  # type: ignore[arg-type]


class TaggedModel(AcpModel):
    """A union variant: its tag fields always count as set, so they are always serialized."""

    __acp_tags__: ClassVar[frozenset[str]] = frozenset()

    def model_post_init(self, context: Any, /) -> None:
        """Mark the tag fields as set even when they came from their defaults."""
        self.__pydantic_fields_set__.update(type(self).__acp_tags__)

    @property
    def raw(self) -> dict[str, Any]:
        """The payload as it goes on the wire (for unknown variants: exactly as received)."""
        return self.to_dict()


def complete_models(module: str) -> None:
    """Build every class of a generated module now instead of at first use.

    `module`: a package's `models` (every model group it loads), one group of `_models`, or a
    module of one's own. For a long-running process that would rather pay the build cost up
    front (a warm-up); nothing depends on it: a class used first builds itself the same way.
    """
    loaded = sys.modules[module]
    exported = getattr(loaded, "__all__", None)
    own = {name: getattr(loaded, name) for name in exported} if exported is not None else {}
    namespace = {**loaded.__dict__, **own}
    pending = [
        value
        for value in (own if exported is not None else namespace).values()
        if isinstance(value, type)
        and issubclass(value, AcpModel)
        and (exported is not None or value.__module__ == module)
        and not value.__pydantic_complete__
    ]
    # and the unbuilt classes they reach in other modules (a group's chain may run through
    # another group): built first, in order, they are not built nested inside these
    wanted, todo = set(pending), list(pending)
    while todo:
        for found in dependencies(todo.pop(), namespace, UNBUILT):
            # a generated class (not a base class of this module, nor pydantic's own)
            if found not in wanted and issubclass(found, AcpModel) and found.__module__ != __name__:
                wanted.add(found)
                pending.append(found)
                todo.append(found)
    # dependencies first (`models.completion`); the schema walks of `__pydantic_on_complete__` still
    # nest once per class of a chain (built ones too), so they get room in proportion to the
    # classes built here and to the longest chain their packages state (`models.generated`)
    bounds = [chain_bound(cls.__module__) for cls in pending]
    links = max([b for b in bounds if isinstance(b, int)], default=0)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 1000 + 20 * len(pending), 1000 + 40 * links))
    try:
        for value in completion_order(namespace, pending):
            if not value.__pydantic_complete__:
                value.model_rebuild()
    finally:
        sys.setrecursionlimit(limit)
