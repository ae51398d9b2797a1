"""`Apart`: the annotation of an alias evaluated apart from the types that use it, so that arrays
and maps nested deeper than Python and pydantic evaluate at once still work. Depends on pydantic,
`models.deferred` and the standard library.

Python's typing evaluates `list[list[...]]` recursively, and pydantic builds its schema one
recursion level per container: a few hundred levels, inline or through aliases, are a
RecursionError when the first model is built. The IR marks an alias `Apart` at every few dozen
levels of such a chain (`acp_codegen/ir/order.py`). For type checkers `Apart[T]` is `T` (`Union` of
one type). At run time it is `Annotated[Any, ApartType(T)]`: typing does not walk into
the marker, and pydantic sees it as a validator and serializer of its own: `T`'s own
`TypeAdapter`, built the first time a value goes through it. No build then goes deeper than one
step of the chain, however long it is.

Values are validated, and written, exactly as `T` is; a validation error inside carries its
location below the alias's own (pydantic-core keeps the line errors of a ValidationError raised
in a validator function).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import GetCoreSchemaHandler, TypeAdapter
from pydantic_core import CoreSchema, core_schema

from .deferred import BUILD_LOCK

__all__ = ["Apart", "ApartType"]


class ApartType:
    """An annotation's marker: values are validated and written through the `TypeAdapter` of
    `type`, built at first use."""

    __slots__ = ("_adapter", "type")

    def __init__(self, type: Any) -> None:
        self.type = type
        self._adapter: TypeAdapter[Any] | None = None

    def __repr__(self) -> str:
        # not the type's own repr: that walks the whole chain below, as deep as the schema
        name = getattr(self.type, "__name__", None) or type(self.type).__name__
        return f"Apart[{name}[...]]"

    def adapter(self) -> TypeAdapter[Any]:
        """The `TypeAdapter` of `type`, built on the first call (under the models' build lock)."""
        adapter = self._adapter
        if adapter is None:
            with BUILD_LOCK:
                adapter = self._adapter
                if adapter is None:
                    adapter = self._adapter = TypeAdapter(self.type)
        return adapter

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.with_info_plain_validator_function(
            self._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                self._serialize, info_arg=True, return_schema=core_schema.any_schema()
            ),
        )

    def _validate(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        # pydantic-core reports the errors of a ValidationError raised here at their own
        # locations below this value's
        return self.adapter().validate_python(value, context=info.context)

    def _serialize(self, value: Any, info: core_schema.SerializationInfo) -> Any:
        return self.adapter().dump_python(
            value,
            mode="json" if info.mode_is_json() else "python",
            by_alias=info.by_alias,
            exclude_unset=info.exclude_unset,
            exclude_defaults=info.exclude_defaults,
            exclude_none=info.exclude_none,
            round_trip=info.round_trip,
            warnings=False,
            context=info.context,
        )


if TYPE_CHECKING:
    from typing import Union as Apart
else:

    class Apart:
        """`Apart[T]`: `T`, validated and written through its own adapter (see the module)."""

        def __class_getitem__(cls, item: Any) -> Any:
            return Annotated[Any, ApartType(item)]
