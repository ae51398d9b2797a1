"""What differs between the pydantic minor releases the bindings support (2.11 to 2.14): flags the
other modules branch on, `named_schema`, `BestFit` and `Discriminator`. Depends on pydantic (and,
inside `named_schema`, on `models.fastschema`, which imports `models.hooks`, which imports this
module).

- `KEEPS_NAME_OPTIONS`: the `by_alias` / `by_name` options of a validation call reach the models
  below a wrap validator (pydantic-core of 2.14 and later); before, those models validate by
  their own configuration, so `models.fastpath` validates such a call with a validator of
  `named_schema`: the class's schema with every model configured as the call asks, which is
  what the options mean (they override every model's `validate_by_alias` / `validate_by_name`).
- `NO_PREBUILT_OPTION`: a `SchemaSerializer` can be told not to reuse the serializers of the
  complete classes it meets (`_use_prebuilt`, pydantic-core of 2.13 and later); before, it
  reuses them (the generated serializers of those classes, which write the same).
- `CALLS_ON_COMPLETE`: pydantic calls a class's `__pydantic_on_complete__` when it builds it
  (2.12 and later, except on a forced rebuild of a complete class); otherwise
  `AcpModel.model_rebuild`, through which every build of a generated class goes, calls it.
- `COUNTS_FIELDS_SET`: an untagged ("smart") union takes the option that set the most of its
  declared fields, a count pydantic-core of 2.12 and later keeps through the wrap validators
  every lenient generated model has. pydantic-core of 2.11 loses it there and takes the first
  option that fits, so a request's `params` could become a looser request class. There,
  `StrictFirst` (every untagged union the generator writes) applies the rule itself (`BestFit`).
- `Discriminator`: pydantic's callable discriminator, which also takes a union of one tagged
  variant (`Annotated[X, Tag("t")]` discriminated, `| None_`, a union whose other option is its
  no-tag variant). pydantic 2.13 and later make it a tagged union of one choice; 2.11 and 2.12
  refuse it ("Discriminator must be used with a Union type"), so this class makes that same
  one-choice tagged union there.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Union, get_args, get_origin

import pydantic
from pydantic import GetCoreSchemaHandler
from pydantic.version import VERSION
from pydantic_core import CoreSchema

PYDANTIC: tuple[int, int] = (int(VERSION.split(".")[0]), int(VERSION.split(".")[1]))
"""The installed pydantic's major and minor version."""

KEEPS_NAME_OPTIONS = PYDANTIC >= (2, 14)
NO_PREBUILT_OPTION = PYDANTIC >= (2, 13)
CALLS_ON_COMPLETE = PYDANTIC >= (2, 12)
COUNTS_FIELDS_SET = PYDANTIC >= (2, 12)
_TAKES_ONE_TYPE = PYDANTIC >= (2, 13)


def _is_union(source_type: Any) -> bool:
    """Whether `source_type` is a `Union[...]` or an `X | Y`."""
    return get_origin(source_type) in (Union, type(int | str))


_CONVERT_TAKES_HANDLER = (
    "handler" in inspect.signature(pydantic.Discriminator._convert_schema).parameters
)


class Discriminator(pydantic.Discriminator):
    """pydantic's `Discriminator`, which also takes a single tagged type on pydantic 2.11/2.12."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source_type: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        if _TAKES_ONE_TYPE or isinstance(self.discriminator, str) or _is_union(source_type):
            return super().__get_pydantic_core_schema__(source_type, handler)
        # pydantic 2.11 and 2.12: what its check refuses, its conversion does (it wraps a schema
        # that is not a union into a union of one choice), as 2.13's whole method does
        return self.tagged_union(handler(source_type), handler)

    def tagged_union(self, options: CoreSchema, handler: GetCoreSchemaHandler) -> CoreSchema:
        """The tagged union of `options` (a union's schema, or one choice's, which may be a
        reference `handler` resolves) by this discriminator."""
        if _CONVERT_TAKES_HANDLER:  # pydantic 2.13 and later resolve a reference with it
            return self._convert_schema(options, handler)  # type: ignore[call-arg,unused-ignore]
        return self._convert_schema(options)


def union_tags(schema: CoreSchema) -> list[str]:
    """The `Tag`s of a union's choices, or of a single schema (a union of one), in order: pydantic
    keeps each in the choice's core metadata."""
    choices = schema["choices"] if schema["type"] == "union" else [schema]
    tags: list[str] = []
    for choice in choices:
        node = choice[0] if isinstance(choice, tuple) else choice
        tag = node.get("metadata", {}).get("pydantic_internal_union_tag_key")
        if isinstance(tag, str):
            tags.append(tag)
    return tags


class BestFit:
    """Smart mode's rule among an untagged union's model options (`COUNTS_FIELDS_SET`)."""

    __slots__ = ("_options", "_source")

    def __init__(self, source: Any) -> None:
        self._source = source
        self._options: tuple[_Option, ...] | None = None

    def _models(self) -> tuple[_Option, ...]:
        """The options that make models, in the union's order (at first use: at schema time the
        classes may not be complete)."""
        if self._options is None:
            self._options = tuple(
                _Option(option, classes)
                for option in get_args(self._source)
                if (classes := _model_classes(option))
            )
        return self._options

    def refit(self, value: Any, result: Any) -> Any:
        """`result`, or the first option that sets more of its declared fields from `value`."""
        if not isinstance(value, dict) or not isinstance(result, pydantic.BaseModel):
            return result
        keys = value.keys()
        count = _fields_set(result)
        # an option sets at most the declared fields `value` holds: most promising first, and
        # none once no option could set more than the best so far
        ranked = sorted(
            (
                (-len(option.wires & keys), index, option)
                for index, option in enumerate(self._models())
                if type(result) not in option.classes
            ),
            key=lambda item: item[:2],
        )
        for most, _, option in ranked:
            if -most <= count:
                break
            try:
                candidate = option.validate(value)
            except pydantic.ValidationError:
                continue
            if isinstance(candidate, pydantic.BaseModel) and _fields_set(candidate) > count:
                result, count = candidate, _fields_set(candidate)
        return result


class _Option:
    """One option of the union: the model classes it makes and every wire name they declare."""

    __slots__ = ("_adapter", "classes", "option", "wires")

    def __init__(self, option: Any, classes: tuple[type[pydantic.BaseModel], ...]) -> None:
        for cls in classes:
            # builds a class not built yet (`models.deferred`): until then its fields may lack the
            # aliases of annotations that name classes defined later
            cls.__pydantic_core_schema__  # noqa: B018
        self.option = option
        self.classes = classes
        self.wires = frozenset(
            _wire(name, field) for cls in classes for name, field in cls.model_fields.items()
        )
        self._adapter: pydantic.TypeAdapter[Any] | None = None

    def validate(self, value: Any) -> Any:
        """`value` validated as this option (a class itself, an alias through an adapter)."""
        if self.classes == (self.option,):
            return self.option.model_validate(value)
        if self._adapter is None:
            self._adapter = pydantic.TypeAdapter(self.option)
        return self._adapter.validate_python(value)


def _model_classes(option: Any) -> tuple[type[pydantic.BaseModel], ...]:
    """The model classes `option` makes: itself, or those an alias (`Annotated`, a union) holds."""
    if isinstance(option, type):
        return (option,) if issubclass(option, pydantic.BaseModel) else ()
    if get_origin(option) is Annotated:
        return _model_classes(get_args(option)[0])
    if not _is_union(option):
        return ()  # an array, a map, a literal: never a model
    found: dict[type[pydantic.BaseModel], None] = {}
    for arg in get_args(option):
        found.update(dict.fromkeys(_model_classes(arg)))
    return tuple(found)


def _wire(name: str, field: Any) -> str:
    alias = field.validation_alias
    return alias if isinstance(alias, str) else field.alias or name


def _fields_set(model: pydantic.BaseModel) -> int:
    """How many declared fields `model` has set (pydantic-core's count: extras are not fields)."""
    return len(model.model_fields_set - (model.__pydantic_extra__ or {}).keys())


def named_schema(schema: CoreSchema, names: dict[str, bool]) -> CoreSchema:
    """`schema` with `names` (`validate_by_alias`, `validate_by_name`) in every config it holds."""
    from .fastschema import _SCHEMA_KEYS, _SCHEMA_LIST_KEYS  # imports this module: not at the top

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
