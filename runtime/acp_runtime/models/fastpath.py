"""`FastPathValidator`, the `__pydantic_validator__` of every generated class: the fast path
(`fast_schema`, in `models.fastschema`) first and, when that fails, the full path. Depends on
pydantic and the standard library.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from .compat import KEEPS_NAME_OPTIONS, named_schema
from .fastschema import _NoFastPath, fast_schema
from .serialize import _model_config

_UNBUILT = object()
# Validations a class runs on the full path before its fast path is built: building it costs
# about as much as the class's own build, which a process that parses a handful of messages
# (a CLI, an agent's first answer) would pay for nothing. Both paths give the same results.
WARM_UP = 64


def _given(
    strict: Any,
    extra: Any,
    context: Any,
    self_instance: Any,
    allow_partial: Any,
    by_alias: Any,
    by_name: Any,
    more: dict[str, Any],
) -> dict[str, Any]:
    """The validation options a caller set (not at their defaults), as keyword arguments."""
    given = dict(more)
    for key, value, default in (
        ("strict", strict, None),
        ("extra", extra, None),
        ("context", context, None),
        ("self_instance", self_instance, None),
        ("allow_partial", allow_partial, False),
        ("by_alias", by_alias, None),
        ("by_name", by_name, None),
    ):
        if value is not default:
            given[key] = value
    return given


def _names(kwargs: dict[str, Any]) -> bool:
    """Whether a call sets `by_alias` or `by_name` (see `FastPathValidator._by_names`)."""
    return "by_alias" in kwargs or "by_name" in kwargs


def _fast_takes(kwargs: dict[str, Any]) -> bool:
    """Whether the fast path may answer a call with these options: not one that sets `by_alias`
    or `by_name` where they do not reach the models below a wrap validator."""
    return KEEPS_NAME_OPTIONS or not _names(kwargs)


class FastPathValidator:
    """`__pydantic_validator__` of a generated class: the fast path, then the full one.

    The fast validator is built at the `WARM_UP`-th validation (or when `fast` is read); until
    then the full path answers. A class whose schema `fast_schema` cannot take keeps the full
    path only (`fast` is None). Construction (`self_instance`) always uses the full path.
    """

    __slots__ = ("_fast", "_named", "_uses", "cls", "full")

    def __init__(self, cls: type[BaseModel], full: Any) -> None:
        self.cls = cls
        self.full = full
        self._fast: Any = _UNBUILT
        self._uses = 0
        self._named: dict[tuple[bool | None, bool | None], SchemaValidator] = {}

    def _by_names(self, kwargs: dict[str, Any]) -> Any:
        """The full validator for a call's `by_alias` / `by_name`.

        pydantic's own where they reach every model (`models.compat.KEEPS_NAME_OPTIONS`), else one
        configured with them, which `kwargs` then no longer carries.
        """
        by_alias, by_name = kwargs.get("by_alias"), kwargs.get("by_name")
        if KEEPS_NAME_OPTIONS or not _names(kwargs):
            return self.full
        if by_alias is False and by_name is False:  # pydantic's own error for that call
            return self.full
        found = self._named.get((by_alias, by_name))
        if found is None:
            names = {"validate_by_alias": by_alias, "validate_by_name": by_name}
            names = {k: v for k, v in names.items() if v is not None}
            schema = self.cls.__pydantic_core_schema__
            config = {**(_model_config(schema, self.cls) or {}), **names}
            found = SchemaValidator(named_schema(schema, names), config)  # type: ignore[arg-type]
            self._named[(by_alias, by_name)] = found
        kwargs.pop("by_alias", None)
        kwargs.pop("by_name", None)
        return found

    def _warm(self) -> SchemaValidator | None:
        """The fast validator once warmed up, else None (this validation takes the full path)."""
        self._uses += 1
        return self.fast if self._uses >= WARM_UP else None

    @property
    def fast(self) -> SchemaValidator | None:
        """The fast validator (None when this class has only the full path)."""
        if self._fast is _UNBUILT:
            try:
                self._fast = SchemaValidator(fast_schema(self.cls.__pydantic_core_schema__))
            except (_NoFastPath, RecursionError):  # a chain too deep to walk: the full path only
                self._fast = None
        return self._fast  # type: ignore[no-any-return]

    # The keyword arguments of `SchemaValidator.validate_json` / `validate_python` are spelled out:
    # callers (`TypeAdapter`, `model_validate_json`) pass all of them, mostly at their defaults, and
    # forwarding them as `**kwargs` to pydantic-core costs as much as a small model's validation.
    def validate_json(
        self,
        input: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        context: Any = None,
        self_instance: Any = None,
        allow_partial: Any = False,
        by_alias: bool | None = None,
        by_name: bool | None = None,
        **more: Any,
    ) -> Any:
        """Validate JSON text with the fast path, and with the full path if that fails."""
        fast = self._fast
        if fast is _UNBUILT:
            fast = self._warm()
        if (
            strict is None
            and extra is None
            and context is None
            and self_instance is None
            and allow_partial is False
            and by_alias is None
            and by_name is None
            and not more
        ):  # the common call, kept short
            if fast is not None:
                try:
                    return fast.validate_json(input)
                except ValidationError:
                    pass
            return self.full.validate_json(input)
        kwargs = _given(
            strict, extra, context, self_instance, allow_partial, by_alias, by_name, more
        )
        if fast is not None and self_instance is None and _fast_takes(kwargs):
            try:
                return fast.validate_json(input, **kwargs)
            except ValidationError:
                pass
        return self._by_names(kwargs).validate_json(input, **kwargs)

    def validate_python(
        self,
        input: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        from_attributes: bool | None = None,
        context: Any = None,
        self_instance: Any = None,
        allow_partial: Any = False,
        by_alias: bool | None = None,
        by_name: bool | None = None,
        **more: Any,
    ) -> Any:
        """Validate Python data with the fast path, and with the full path if that fails."""
        if (
            strict is None
            and extra is None
            and from_attributes is None
            and context is None
            and self_instance is None
            and allow_partial is False
            and by_alias is None
            and by_name is None
            and not more
        ):  # the common call, kept short
            return self.validate_plain(input)
        fast = self._fast
        if fast is _UNBUILT:
            fast = self._warm()
        kwargs = _given(
            strict, extra, context, self_instance, allow_partial, by_alias, by_name, more
        )
        if from_attributes is not None:
            kwargs["from_attributes"] = from_attributes
        if fast is not None and self_instance is None and _fast_takes(kwargs):
            try:
                return fast.validate_python(input, **kwargs)
            except ValidationError:
                pass
        return self._by_names(kwargs).validate_python(input, **kwargs)

    def validate_plain(self, input: Any) -> Any:
        """`validate_python(input)` with no options, for callers that validate message after
        message (the JSON-RPC dispatcher, through `jsonrpc.framing.plain_validator`)."""
        fast = self._fast
        if fast is _UNBUILT:
            fast = self._warm()
        if fast is not None:
            try:
                return fast.validate_python(input)
            except ValidationError:
                pass
        return self.full.validate_python(input)

    def validate_strings(self, input: Any, **kwargs: Any) -> Any:
        """Validate input whose leaves are strings, with the full path only."""
        return self.full.validate_strings(input, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.full, name)

    def __repr__(self) -> str:
        return f"FastPathValidator({self.cls.__name__})"
