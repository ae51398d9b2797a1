"""The model machinery of the generated bindings: what every generated model, enum and union is
built on. Depends on pydantic and the standard library.

- `AcpModel`, `TaggedModel` (`base`): unknown fields kept, wire names on output (`wire_name`:
  the camelCase name of a field without an alias), `null` distinct
  from an omitted field, classes built at their first use (`deferred`, `completion`), their
  string annotations evaluated once (`annotations`), a fast validation path (`fastschema`,
  `fastpath`) and generated serializers (`serialize`); `complete_models` builds ahead of use.
- `OpenEnum`, `member` (`openenum`): string enums that keep values they do not know.
- The full path's validation hooks (`hooks`): union tags (`TaggedBy`, `tag_discriminator`,
  `UNKNOWN_TAG`, `NONE_TAG`), field annotations (`NOT_NULL`, `TagValue`, `NOT_KNOWN_TAG`,
  `STRICT_FIRST`, `ONE_OF`) and `lenient`, which applies the schema's leniency hints.
- Annotations of fields: `Sequence` (arrays, `strict`), `JsonInt` / `Integer` (JSON Schema's
  `integer`, `jsonint`), `Apart` (aliases nested deeper than Python evaluates at once, `apart`),
  `Discriminator` (pydantic's callable discriminator on every supported minor, `compat`).
- The two validation modes, parsing and building (`strict`: `building`, `BUILDING`).

What differs between pydantic minors is in `compat`; nothing else here branches on a version.
"""

from __future__ import annotations

from .apart import Apart
from .base import AcpModel, TaggedModel, complete_models, wire_name
from .compat import Discriminator
from .hooks import (
    NONE_TAG,
    NOT_KNOWN_TAG,
    NOT_NULL,
    ONE_OF,
    STRICT_FIRST,
    UNKNOWN_TAG,
    NotKnownTag,
    NotNull,
    OneOf,
    StrictFirst,
    TaggedBy,
    TagValue,
    lenient,
    tag_discriminator,
)
from .jsonint import Integer, JsonInt
from .openenum import OpenEnum, member
from .strict import BUILDING, RECEIVED, Sequence, building

__all__ = [
    "BUILDING",
    "NONE_TAG",
    "NOT_KNOWN_TAG",
    "NOT_NULL",
    "ONE_OF",
    "RECEIVED",
    "STRICT_FIRST",
    "UNKNOWN_TAG",
    "AcpModel",
    "Apart",
    "Discriminator",
    "Integer",
    "JsonInt",
    "NotKnownTag",
    "NotNull",
    "OneOf",
    "OpenEnum",
    "Sequence",
    "StrictFirst",
    "TagValue",
    "TaggedBy",
    "TaggedModel",
    "building",
    "complete_models",
    "lenient",
    "member",
    "tag_discriminator",
    "wire_name",
]
