"""Validation hooks of the full path (see `models.fastschema`): the union tags (`TaggedBy`,
`UNKNOWN_TAG`, `NONE_TAG`, `tag_discriminator`), the field annotations (`NOT_NULL`, `TagValue`,
`NOT_KNOWN_TAG`, `STRICT_FIRST`, `ONE_OF`) and `lenient`, which applies the schema's leniency hints.
Depends on pydantic and the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from functools import partial
from typing import Any, get_args

from pydantic import BaseModel, GetCoreSchemaHandler, ValidationError
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from .compat import COUNTS_FIELDS_SET, BestFit, Discriminator, union_tags
from .openenum import _STR_SER, OpenEnum
from .strict import BUILDING

UNKNOWN_TAG = "__unknown__"
NONE_TAG = "__none__"


def tag_discriminator(
    wire: str, attr: str, known: frozenset[str], *, has_none: bool, has_unknown: bool, lenient: bool
) -> Callable[[Any], str | None]:
    """Callable discriminator: the tag for a known value, else the union's unknown/none choice."""

    def discriminate(value: Any) -> str | None:
        tag = value.get(wire) if isinstance(value, dict) else getattr(value, attr, None)
        if tag is None:
            return NONE_TAG if has_none else None
        if isinstance(tag, str):
            if tag in known:
                return tag if type(tag) is str else str.__str__(tag)
            return UNKNOWN_TAG if has_unknown else None
        return NONE_TAG if (lenient and has_none) else None

    discriminate.__acp_tag__ = wire  # type: ignore[attr-defined]  # read by `fast_schema`
    return discriminate


class TaggedBy:
    """Annotation of a tagged union: each option is `Annotated[Variant, Tag(tag)]`, chosen by the
    tag (`wire` in wire data, `attr` on a model; `attr` defaults to `wire`). The known tags, and
    whether a value without a tag or with an unknown one has a variant (`NONE_TAG`,
    `UNKNOWN_TAG`), are read from the options. `lenient`: a malformed tag counts as absent."""

    __slots__ = ("attr", "lenient", "wire")

    def __init__(self, wire: str, attr: str | None = None, *, lenient: bool = False) -> None:
        self.wire = wire
        self.attr = wire if attr is None else attr
        self.lenient = lenient

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        # the options' schemas, each holding its `Tag` (a union of one is a single schema: its
        # `Tag` sits beside this annotation, where the type alone would not show it)
        options = handler(source)
        tags = union_tags(options)
        choose = tag_discriminator(
            self.wire,
            self.attr,
            frozenset(t for t in tags if t not in (NONE_TAG, UNKNOWN_TAG)),
            has_none=NONE_TAG in tags,
            has_unknown=UNKNOWN_TAG in tags,
            lenient=self.lenient,
        )
        return Discriminator(choose).tagged_union(options, handler)


class NotNull:
    """Annotation for optional fields that may be omitted but not sent as `null`."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        if schema["type"] == "nullable":
            inner: CoreSchema = schema["schema"]
            return inner
        return schema


NOT_NULL = NotNull()


class TagValue:
    """Annotation of a variant's tag typed by an open enum.

    Only this variant's own value is valid.
    """

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.literal_schema([source._coerce(self.value)], serialization=_STR_SER)


class NotKnownTag:
    """Annotation of an unknown variant's tag: any value except the ones its union names."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(_reject_known_tag, handler(source))


def _reject_known_tag(value: OpenEnum) -> OpenEnum:
    if value.is_known:
        raise PydanticCustomError(
            "acp_known_tag",
            "{tag!r} names a known variant: use that variant's class",
            {"tag": value.value},
        )
    return value


_reject_known_tag.__acp_keep__ = True  # type: ignore[attr-defined]  # same on both paths

NOT_KNOWN_TAG = NotKnownTag()


# False while an untagged union tries its options as they are (see `StrictFirst`).
_REPAIRS: ContextVar[bool] = ContextVar("acp_repairs", default=True)


class StrictFirst:
    """Annotation of an untagged union: an option the value fits as it is wins over one that only
    fits after a leniency repair (dropping or skipping parts of it). So a value the schema accepts
    through one option is never rewritten to fit another."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        if COUNTS_FIELDS_SET:
            return core_schema.no_info_wrap_validator_function(_strict_first, handler(source))
        hook = partial(_strict_first, fit=BestFit(source))  # pydantic 2.11 (see `models.compat`)
        hook.__acp_strict_first__ = True  # type: ignore[attr-defined]  # for `models.fastschema`
        return core_schema.no_info_wrap_validator_function(hook, handler(source))


def _strict_first(value: Any, handler: Callable[[Any], Any], fit: BestFit | None = None) -> Any:
    # `fit` (pydantic 2.11) refits within each pass, so its options validate as that pass does
    validate = handler if fit is None else (lambda v: fit.refit(v, handler(v)))
    if _REPAIRS.get():
        token = _REPAIRS.set(False)
        try:
            return validate(value)
        except ValidationError:
            pass
        finally:
            _REPAIRS.reset(token)
    return validate(value)


_strict_first.__acp_strict_first__ = True  # type: ignore[attr-defined]  # for `models.fastschema`


STRICT_FIRST = StrictFirst()


class OneOf:
    """Annotation of a union of model classes from the schema's `oneOf`: a value is valid only
    when exactly one option accepts it as it is. The union picks the option (first fit); this
    then rejects the value if another option would accept it too, as JSON Schema does. (The other
    options are tried with pydantic's default settings: no strict mode, no validation context.)"""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        options = tuple(
            o for o in get_args(source) if isinstance(o, type) and issubclass(o, BaseModel)
        )

        def one_of(value: Any, inner: Callable[[Any], Any]) -> Any:
            return _exactly_one(options, value, inner)

        return core_schema.no_info_wrap_validator_function(one_of, handler(source))


def _exactly_one(
    options: tuple[type[BaseModel], ...], value: Any, handler: Callable[[Any], Any]
) -> Any:
    result = handler(value)
    if isinstance(value, BaseModel):  # an instance is of one class: nothing else to compare
        return result
    token = _REPAIRS.set(False)
    try:
        for option in options:
            if isinstance(result, option):
                continue
            try:
                option.model_validate(value)
            except ValidationError:
                continue
            raise PydanticCustomError(
                "acp_one_of",
                "the value fits both {chosen} and {other}; the schema's `oneOf` allows exactly one",
                {"chosen": type(result).__name__, "other": option.__name__},
            )
    finally:
        _REPAIRS.reset(token)
    return result


ONE_OF = OneOf()


def lenient(
    cls: type[BaseModel],
    data: Any,
    handler: Callable[[Any], Any],
    rules: dict[str, frozenset[str]],
) -> Any:
    """Apply the schema's `x-deserialize-*` hints for one model, then validate (parsing only)."""
    if not _REPAIRS.get() or BUILDING.get():
        return handler(data)
    if isinstance(data, dict):
        nulls = [
            k for k, r in rules.items() if "default_on_null" in r and k in data and data[k] is None
        ]
        if nulls:
            data = {k: v for k, v in data.items() if k not in nulls}
    try:
        return handler(data)
    except ValidationError as exc:
        if not isinstance(data, dict):
            raise
        repaired = _repair(data, exc, rules)
        if repaired is None:
            raise
        return handler(repaired)


def _repair(
    data: dict[str, Any], exc: ValidationError, rules: dict[str, frozenset[str]]
) -> dict[str, Any] | None:
    drop: set[str] = set()
    skip: dict[str, set[int]] = {}
    for error in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = error["loc"]
        if not loc or not isinstance(loc[0], str) or loc[0] not in data:
            continue
        key = loc[0]
        rule = rules.get(key, frozenset())
        item = loc[1] if len(loc) > 1 else None
        if "skip_invalid_items" in rule and isinstance(item, int) and isinstance(data[key], list):
            skip.setdefault(key, set()).add(item)
        elif "default_on_error" in rule or ("default_on_null" in rule and data[key] is None):
            drop.add(key)
    if not drop and not skip:
        return None
    fixed = {k: v for k, v in data.items() if k not in drop}
    for key, indexes in skip.items():
        if key in fixed:
            fixed[key] = [v for i, v in enumerate(fixed[key]) if i not in indexes]
    return fixed
