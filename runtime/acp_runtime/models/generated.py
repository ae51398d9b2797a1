"""What the runtime knows of the model modules of a generated package: whether a class is one of
theirs, the longest chain of classes their package states, and the annotation values the classes
of one execution of such a module share. Standard library only.

A generated package's `_models/__init__.py` states `_CHAIN_BOUND` (from
`acp_codegen/ir/chains.py`), the longest chain of its classes each naming the next; a module of
that package is a generated model module. Nothing else marks them, so a user's subclass in a
module of its own keeps pydantic's own handling.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def chain_bound(module_name: str) -> int | None:
    """The `_CHAIN_BOUND` the package of `module_name` states.

    None if `module_name` is not a generated model module.
    """
    package = sys.modules.get(module_name.rpartition(".")[0])
    bound = getattr(package, "_CHAIN_BOUND", None) if package is not None else None
    return bound if isinstance(bound, int) and not isinstance(bound, bool) else None


_SHARED: dict[str, tuple[object, dict[Any, Any]]] = {}


def shared_values(module: ModuleType) -> dict[Any, Any]:
    """The annotation values the classes of one execution of a generated model module share (an
    `importlib.reload` starts afresh: it gives the module a new spec)."""
    spec = getattr(module, "__spec__", None)
    entry = _SHARED.get(module.__name__)
    if entry is None or entry[0] is not spec:
        entry = _SHARED[module.__name__] = (spec, {})
    return entry[1]
