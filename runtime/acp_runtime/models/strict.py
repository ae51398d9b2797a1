"""The two validation modes of the generated models: *parsing* wire data and *building* values in
Python. Depends on the standard library only.

Parsing (`from_json`, `from_dict`, `model_validate*`, the runtime's inbound path) is the default:
wire names only, the schema's leniency hints applied, unknown fields, variants and enum values
kept (and marked as received). Building (a model's constructor, `model_copy(update=...)`, the
generated builders) runs inside `building()`: Python or wire names, no leniency repairs, and the
spec's emitter rule: an open enum value or a custom union tag the schema does not name must start
with `_`, unless it is a received value being passed on.

`Sequence` is the annotation of array fields: `collections.abc.Sequence` for type checkers (a
field takes any sequence of its item's subtypes: lists are invariant), `list` at run time, so
arrays validate and serialize as lists on pydantic's fastest paths (a real `Sequence` costs a
Python call per field on every write, and a value built from a tuple would stay a tuple).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

__all__ = ["BUILDING", "RECEIVED", "Sequence", "building"]

if TYPE_CHECKING:
    # An array field takes any sequence of its item's subtypes (lists are invariant)...
    from collections.abc import Sequence
else:
    Sequence = list  # ...and is validated and emitted as a list.

# True while a value built in Python is validated (nested models included).
BUILDING: ContextVar[bool] = ContextVar("acp_building", default=False)

RECEIVED = "_acp_received"  # instance attribute of an unknown open-enum value that was parsed


@contextmanager
def building() -> Iterator[None]:
    """Validate in build mode for the duration of the block."""
    token = BUILDING.set(True)
    try:
        yield
    finally:
        BUILDING.reset(token)
