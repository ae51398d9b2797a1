"""The order in which a generated module's classes are completed (`completion_order`). Standard
library only.

pydantic leaves a class incomplete while a class it names is not defined yet, and completing it
later builds the schema of every incomplete class it reaches, one inside the other: a chain of a
few dozen definitions emitted in name order is then deeper than Python's recursion limit.
Completed dependencies first, each class finds the classes it names complete and reuses their
schemas, so no step goes deeper than one class.
"""

from __future__ import annotations

import inspect
import re
import sys
import typing
from collections import ChainMap
from collections.abc import Container, Iterator, Mapping, MutableMapping
from typing import Any, ForwardRef, TypeVar, cast

_T = TypeVar("_T", bound=type)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def completion_order(namespace: Mapping[str, Any], pending: list[_T]) -> list[_T]:
    """`pending` with every class after the pending classes it depends on (fields, bases and the
    aliases they name), otherwise in the given order; iterative, so chains of any length."""
    wanted: set[type] = set(pending)
    done: set[type] = set()
    out: list[type] = []
    for root in pending:
        if root in done:
            continue
        path: list[tuple[type, Iterator[type]]] = [(root, dependencies(root, namespace, wanted))]
        on_path: set[type] = {root}
        while path:
            cls, deps = path[-1]
            for dep in deps:
                if dep not in done and dep not in on_path:
                    path.append((dep, dependencies(dep, namespace, wanted)))
                    on_path.add(dep)
                    break
            else:
                path.pop()
                on_path.discard(cls)
                done.add(cls)
                out.append(cls)
    return cast("list[_T]", out)  # every class in it comes from `pending`


def dependencies(
    cls: type, namespace: Mapping[str, Any], wanted: Container[type]
) -> Iterator[type]:
    """The classes of `wanted` that `cls` names in its own or its bases' annotations.

    A name is looked up where its annotation was written: in the module of the class (or base)
    that declares it, then in `namespace` (a forward reference of a class of another module
    names a class of that module).
    """
    for klass in cls.__mro__:
        if klass in wanted and klass is not cls:
            yield klass
        module = sys.modules.get(klass.__module__)
        scope = (
            ChainMap(vars(module), cast("MutableMapping[str, Any]", namespace))
            if module
            else namespace
        )
        for annotation in inspect.get_annotations(klass).values():
            for found in _classes(annotation, scope):
                if found in wanted and found is not cls:
                    yield found


def _classes(annotation: Any, namespace: Mapping[str, Any]) -> Iterator[type]:
    """Every class an annotation (a string, a type, an alias) mentions, aliases followed."""
    stack = [annotation]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, ForwardRef):
            value = value.__forward_arg__
        if isinstance(value, str):
            stack.extend(namespace[name] for name in _NAME.findall(value) if name in namespace)
        elif isinstance(value, type):
            yield value
        else:
            stack.extend(typing.get_args(value))
            inner = getattr(value, "__value__", None)  # a TypeAliasType
            if inner is not None:
                stack.append(inner)
