"""JSON Schema's `integer` for the generated models (`JsonInt`, `Integer`). Depends on pydantic.

JSON Schema counts every number with a zero fractional part as an integer: `2.0` is one. A field
the schema types `integer` therefore accepts `2` and `2.0`, both as the Python int `2`, and
rejects `2.5`, strings and booleans (pydantic's `StrictInt` rejected `2.0`; its lax `int` would
take `"2"` and `true`). Validation stays inside pydantic-core, with no Python call: a strict int,
or else a strict float handed on to a lax int (which refuses a fractional part or an overflow).

Decision: the value is a Python `int`, so it is written back as `2`. That is the same JSON number
(JSON Schema's equality, and Python's: `2 == 2.0`), though not the same text; keeping the float
would make every `integer` field `int | float` for the code that reads it.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema


class Integer:
    """Annotation marker: a JSON Schema `integer` (bounds included).

    Used as `Annotated[int, Integer(...)]`.
    """

    __slots__ = ("bounds",)

    def __init__(
        self,
        *,
        ge: float | None = None,
        le: float | None = None,
        gt: float | None = None,
        lt: float | None = None,
        multiple_of: int | None = None,
    ) -> None:
        # integer bounds, as pydantic-core's int schema needs them (`gt=2.5` means `ge=3`)
        given = {
            "ge": None if ge is None else math.ceil(ge),
            "le": None if le is None else math.floor(le),
            "gt": None if gt is None else math.floor(gt),
            "lt": None if lt is None else math.ceil(lt),
            "multiple_of": multiple_of,
        }
        self.bounds: dict[str, int] = {k: v for k, v in given.items() if v is not None}

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """A strict int, else a strict float that a lax int turns into an int.

        See the module docstring.
        """
        return core_schema.union_schema(
            [
                core_schema.int_schema(strict=True, **self.bounds),  # type: ignore[arg-type]
                core_schema.chain_schema(
                    [
                        core_schema.float_schema(strict=True),
                        core_schema.int_schema(strict=False, **self.bounds),  # type: ignore[arg-type]
                    ]
                ),
            ]
        )

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """`{"type": "integer", ...bounds}`, as the source schema says."""
        names = {
            "ge": "minimum",
            "le": "maximum",
            "gt": "exclusiveMinimum",
            "lt": "exclusiveMaximum",
            "multiple_of": "multipleOf",
        }
        return {"type": "integer", **{names[k]: v for k, v in self.bounds.items()}}

    def __repr__(self) -> str:
        return f"Integer({', '.join(f'{k}={v!r}' for k, v in self.bounds.items())})"


JsonInt = Annotated[int, Integer()]
"""An unconstrained JSON Schema `integer`."""
