"""Build at first use: `defer`, which makes a generated class's `__pydantic_core_schema__`,
`__pydantic_validator__` and `__pydantic_serializer__` build the class the first time any of them
is read, and `BUILD_LOCK`, under which every build of a generated class runs. Depends on pydantic,
`models.completion` and the standard library.

The generated classes are `defer_build`: pydantic leaves placeholders ("mocks") in those three
attributes and builds the class when a method of a placeholder is called. Reading the attribute
itself (`cls.__pydantic_core_schema__` handed to pydantic-core,
`isinstance(cls.__pydantic_validator__, ...)`) would still see the placeholder; `defer` replaces
each placeholder by one that is also a descriptor, so reading it builds the class and answers with
what the build made. pydantic's own checks (`isinstance(..., MockCoreSchema)`) still see a class
that is not built yet.

A `TypeAdapter` of a built class shares the class's validator and serializer (its fast path), as it
did when classes were built at import: the class's `model_config` answers `get("defer_build")` with
False (`_ClassConfig`; `TypeAdapter` asks only that, to decide whether to wait), while the classes
derived from it still inherit `defer_build` (pydantic copies the dict).

A class that refers to a long chain of classes not built yet would build them all inside its own
build, one recursion level of pydantic's schema generator per link (a RecursionError past a few
dozen). So before building a class, `built` builds, bottom up, every unbuilt class it reaches
whose chain of unbuilt classes below it is a multiple of `_CHAIN_STEP` long: no single build
then goes deeper than that, however long the chain, and shallow classes (every one of ACP's
today) build exactly as before. A generated package states a bound of its longest chain
(`models.generated.chain_bound`); below the step, the walk is skipped.

A build runs under `BUILD_LOCK`, the lock pydantic rebuilds models under, from the first read to
the end of the completion hook (`AcpModel.__pydantic_on_complete__`). So a thread or task that
uses a class while another builds it waits, then sees the finished class.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any, cast

import pydantic.main
from pydantic import BaseModel, ConfigDict
from pydantic._internal._mock_val_ser import MockCoreSchema, MockValSer

from .completion import dependencies
from .generated import chain_bound

# One lock with pydantic's: two locks could be taken in opposite orders by two threads.
BUILD_LOCK: Any = getattr(pydantic.main, "_rebuild_lock", None) or threading.RLock()

_DEFERRED = ("__pydantic_core_schema__", "__pydantic_validator__", "__pydantic_serializer__")

_CHAIN_STEP = 16
"""The most links of unbuilt classes one build walks through (see the module docstring)."""

_BUILDING: set[type] = set()
"""The classes whose `model_rebuild` runs now (under `BUILD_LOCK`, so in this thread)."""


def built(cls: type[BaseModel], name: str) -> Any:
    """Build `cls` if it is not built yet, and return its attribute `name` (a class attribute)."""
    with BUILD_LOCK:
        if cls in _BUILDING:  # pydantic < 2.14's model_rebuild reads the placeholders it replaces
            return cls.__dict__[name]
        if not _complete(cls):
            bound = chain_bound(cls.__module__)
            steps: list[type[BaseModel]] = []
            if isinstance(bound, int) and bound < _CHAIN_STEP:
                height = bound  # no chain to cut: no walk
            else:
                steps, height = _chain_steps(cls)
            # The completion hooks walk a class's whole schema, one level per link of a chain,
            # through the classes built before it too: room for the module's longest chain.
            limit = sys.getrecursionlimit()
            links = max(height, bound if isinstance(bound, int) else 0)
            sys.setrecursionlimit(max(limit, 1000 + 40 * links))
            try:
                for step in steps:
                    if not _complete(step):
                        _rebuild(step)
                _rebuild(cls)
            finally:
                sys.setrecursionlimit(limit)
    return cls.__dict__[name]


def _rebuild(cls: type[BaseModel]) -> None:
    _BUILDING.add(cls)
    try:
        cls.model_rebuild(_parent_namespace_depth=0)  # names resolve in the module
    finally:
        _BUILDING.discard(cls)


def _complete(cls: type) -> bool:
    return bool(cls.__dict__.get("__pydantic_complete__", False))


class _Unbuilt:
    """The model classes not built yet (a container for `dependencies`)."""

    def __contains__(self, value: object) -> bool:
        return isinstance(value, type) and issubclass(value, BaseModel) and not _complete(value)


UNBUILT = _Unbuilt()
"""Contains the pydantic model classes that are not built yet."""


def _chain_steps(cls: type[BaseModel]) -> tuple[list[type[BaseModel]], int]:
    """The unbuilt classes below `cls` to build first, bottom up: those whose longest chain of
    unbuilt classes below is a positive multiple of `_CHAIN_STEP` (an iterative depth-first
    walk); and the length of the longest chain below `cls`."""
    namespace = vars(sys.modules[cls.__module__])

    def below(node: type) -> Iterator[type]:
        return dependencies(node, namespace, UNBUILT)

    children: dict[type, list[type]] = {cls: list(below(cls))}
    height: dict[type, int] = {}
    steps: list[type[BaseModel]] = []
    on_path: set[type] = {cls}
    stack: list[tuple[type, Iterator[type]]] = [(cls, iter(children[cls]))]
    while stack:
        node, pending = stack[-1]
        child = next((c for c in pending if c not in height and c not in on_path), None)
        if child is not None:
            on_path.add(child)
            children[child] = list(below(child))
            stack.append((child, iter(children[child])))
            continue
        stack.pop()
        on_path.discard(node)
        height[node] = 1 + max((height[c] for c in children[node] if c in height), default=-1)
        if node is not cls and height[node] and height[node] % _CHAIN_STEP == 0:
            steps.append(cast("type[BaseModel]", node))
    return steps, height[cls]


class _DeferredSchema(MockCoreSchema):
    """A placeholder core schema that builds its class when read from the class."""

    __slots__ = ("_name",)
    _name: str

    def __get__(self, instance: Any, owner: type[BaseModel]) -> Any:
        return built(owner, self._name)


class _DeferredValSer(MockValSer[Any]):
    """A placeholder validator or serializer that builds its class when read from the class."""

    __slots__ = ("_name",)
    _name: str

    def __get__(self, instance: Any, owner: type[BaseModel]) -> Any:
        return built(owner, self._name)


class _ClassConfig(dict[str, Any]):
    """A generated class's `model_config`: `defer_build` for pydantic, not for `TypeAdapter`."""

    def get(self, key: str, default: Any = None) -> Any:
        if key == "defer_build":
            return False
        return super().get(key, default)


def defer(cls: type[BaseModel]) -> None:
    """Replace the build placeholders pydantic left on `cls` by ones that build it when read."""
    if type(cls.__dict__.get("model_config")) is not _ClassConfig:
        cls.model_config = cast(ConfigDict, _ClassConfig(cls.model_config))
    for name in _DEFERRED:
        mock = cls.__dict__.get(name)
        deferred: MockCoreSchema | MockValSer[Any]
        if type(mock) is MockCoreSchema:
            deferred = _DeferredSchema.__new__(_DeferredSchema)
            deferred._built_memo = None
        elif type(mock) is MockValSer:
            deferred = _DeferredValSer.__new__(_DeferredValSer)
            deferred._val_or_ser = mock._val_or_ser
        else:  # built already, or a pydantic whose placeholders differ: nothing to replace
            continue
        deferred._error_message = mock._error_message
        deferred._code = mock._code
        deferred._attempt_rebuild = mock._attempt_rebuild
        deferred._name = name
        setattr(cls, name, deferred)
