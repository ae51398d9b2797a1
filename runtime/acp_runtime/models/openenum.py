"""Open string enums: `OpenEnum`, the base class of every generated enum (values it does not know
are accepted, kept and classified), and `member`, which declares a named constant in its class:

    class StopReason(OpenEnum):             # `OpenEnum, closed=True`: unknown values refused
        END_TURN: ClassVar[StopReason] = member("end_turn")

Depends on pydantic and the standard library.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, PydanticCustomError, PydanticKnownError, core_schema

from .strict import BUILDING, RECEIVED

_STR_SER = core_schema.simple_ser_schema("str")  # enum members are `str`s: no Python call on output


class _Member(str):
    """A named constant's value in its class body, until the class makes it a member."""


def member(value: str) -> Any:
    """Declare a named constant of an `OpenEnum` subclass (annotate it `ClassVar[TheEnum]`)."""
    return _Member(value)


class OpenEnum(str):
    """A string enum that accepts and preserves values it does not know (when open)."""

    __acp_members__: ClassVar[dict[str, Any]] = {}
    __acp_open__: ClassVar[bool] = True

    def __init_subclass__(cls, *, closed: bool = False, **kwargs: Any) -> None:
        """Make the constants `member` declared the class's members, in their order; `closed`:
        values it does not name are refused."""
        super().__init_subclass__(**kwargs)
        cls.__acp_open__ = not closed
        members: dict[str, Any] = {}
        for name, value in list(vars(cls).items()):
            if type(value) is _Member:
                members[str.__str__(value)] = made = cls(str.__str__(value))
                setattr(cls, name, made)
        cls.__acp_members__ = members

    @property
    def is_known(self) -> bool:
        """The value is one this schema revision names."""
        return str.__str__(self) in type(self).__acp_members__

    @property
    def is_extension(self) -> bool:
        """An unknown value starting with `_`: an implementation-specific extension."""
        return not self.is_known and self.startswith("_")

    @property
    def is_reserved(self) -> bool:
        """An unknown value without `_`: reserved for a future ACP version."""
        return not self.is_known and not self.startswith("_")

    @property
    def value(self) -> str:
        """The plain string value."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str.__str__(self)!r})"

    @classmethod
    def known_values(cls) -> tuple[str, ...]:
        """The values this schema revision names, in schema order."""
        return tuple(cls.__acp_members__)

    @classmethod
    def _coerce(cls, value: str) -> Any:
        member = cls.__acp_members__.get(value)
        if member is not None:
            return member
        if not BUILDING.get():  # parsing: keep the value, marked as received
            received = cls(value)
            received.__dict__[RECEIVED] = True
            return received
        if isinstance(value, cls) and value.__dict__.get(RECEIVED):
            return value  # a received value passed on
        if value.startswith("_"):
            return cls(value)
        raise PydanticCustomError(
            "acp_reserved_value",
            "'{value}' is not a {enum} value this schema names; only `_`-prefixed extension "
            "values may be sent (known: {known})",
            {
                "value": str.__str__(value),
                "enum": cls.__name__,
                "known": ", ".join(cls.__acp_members__),
            },
        )

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        inner: CoreSchema
        if cls.__acp_open__:
            inner = core_schema.json_or_python_schema(
                json_schema=core_schema.str_schema(strict=True),
                python_schema=core_schema.no_info_plain_validator_function(_text),
            )
        else:
            inner = core_schema.literal_schema(list(cls.__acp_members__))
        return core_schema.no_info_after_validator_function(
            cls._coerce, inner, serialization=_STR_SER
        )


def _text(value: Any) -> str:
    """A `str` as it is: an enum instance stays itself, so a received value keeps its mark."""
    if isinstance(value, str):
        return value
    raise PydanticKnownError("string_type")


_COERCE = OpenEnum.__dict__["_coerce"].__func__  # the open-enum hook `fast_schema` replaces
