"""What differs between the pydantic minor releases the bindings support (2.12 to 2.14): flags
the other modules branch on, `named_schema` and `Discriminator`. Depends on pydantic and
`_fastschema`.

- `KEEPS_NAME_OPTIONS`: the `by_alias` / `by_name` options of a validation call reach the models
  below a wrap validator (pydantic-core of 2.14 and later); before, those models validate by
  their own configuration, so `_fastpath` validates such a call with a validator of
  `named_schema`: the class's schema with every model configured as the call asks, which is
  what the options mean (they override every model's `validate_by_alias` / `validate_by_name`).
- `NO_PREBUILT_OPTION`: a `SchemaSerializer` can be told not to reuse the serializers of the
  complete classes it meets (`_use_prebuilt`, pydantic-core of 2.13 and later); before, it
  reuses them (the generated serializers of those classes, which write the same).
- `Discriminator`: pydantic's callable discriminator, which also takes a union of one tagged
  variant (`Annotated[X, Tag("t")]` discriminated, `| None_`, a union whose other option is its
  no-tag variant). pydantic 2.13 and later make it a tagged union of one choice; 2.12 refuses
  it ("Discriminator must be used with a Union type"), so this class makes that same
  one-choice tagged union there.
"""

from __future__ import annotations

from typing import Any, Union, get_origin

import pydantic
from pydantic import GetCoreSchemaHandler
from pydantic.version import VERSION
from pydantic_core import CoreSchema

from ._fastschema import _SCHEMA_KEYS, _SCHEMA_LIST_KEYS

PYDANTIC: tuple[int, int] = (int(VERSION.split(".")[0]), int(VERSION.split(".")[1]))
"""The installed pydantic's major and minor version."""

KEEPS_NAME_OPTIONS = PYDANTIC >= (2, 14)
NO_PREBUILT_OPTION = PYDANTIC >= (2, 13)
_TAKES_ONE_TYPE = PYDANTIC >= (2, 13)


def _is_union(source_type: Any) -> bool:
    """Whether `source_type` is a `Union[...]` or an `X | Y`."""
    return get_origin(source_type) in (Union, type(int | str))


class Discriminator(pydantic.Discriminator):
    """pydantic's `Discriminator`, which also takes a single tagged type on pydantic 2.12."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source_type: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        if _TAKES_ONE_TYPE or isinstance(self.discriminator, str) or _is_union(source_type):
            return super().__get_pydantic_core_schema__(source_type, handler)
        # pydantic 2.12: what its check refuses, its conversion does (it wraps a schema
        # that is not a union into a union of one choice), as 2.13's whole method does
        return self._convert_schema(handler(source_type))


def named_schema(schema: CoreSchema, names: dict[str, bool]) -> CoreSchema:
    """`schema` with `names` (`validate_by_alias`, `validate_by_name`) in every config it holds."""
    memo: dict[int, Any] = {}

    def node(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return type(value)(node(item) for item in value)
        if not isinstance(value, dict):
            return value
        done = memo.get(id(value))
        if done is None:
            done = memo[id(value)] = {}
            for key, item in value.items():
                if key == "config" and isinstance(item, dict):
                    done[key] = {**item, **names}
                elif key in ("fields", "choices") and isinstance(item, dict):
                    done[key] = {name: node(field) for name, field in item.items()}
                elif key in _SCHEMA_KEYS or key in _SCHEMA_LIST_KEYS:
                    done[key] = node(item)
                else:
                    done[key] = item
        return done

    out: CoreSchema = node(schema)
    return out
