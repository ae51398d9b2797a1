"""JSON-RPC 2.0 runtime, wire level: error codes and errors, method specs, frames, conversion.

Owns what a message is on the wire: the JSON-RPC error codes and ``RpcError``, ``MethodSpec``
(how an inbound method is validated and dispatched), the reader/writer protocols, the order key
of notifications, the conversion of values to and from JSON through pydantic (a result of the
wrong type is an error, never a warning), and the one-line frames of requests, notifications,
results and errors. The checks of inbound messages are in ``jsonrpc.envelope``. No I/O, no state
beyond caches.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any, Final, Literal, Protocol, TypeAlias, TypeGuard

import pydantic
import pydantic_core

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800

CANCEL_REQUEST_METHOD: Final = "$/cancel_request"
SHARED_ORDER_KEY: Final = ("$shared",)

_JSONRPC: Final = "2.0"

RequestId: TypeAlias = int | str
OrderKey: TypeAlias = Callable[[str, Any], Hashable | None]
Job: TypeAlias = tuple[str, Callable[..., Awaitable[Any]], tuple[Any, ...]]
"""A queued notification: (method, handler, handler arguments)."""


class MethodSpec:
    """How one inbound method is validated and dispatched to its handler.

    ``params`` and ``result`` are the types its messages are validated into (None: no params, or
    no result). A generated table names them instead, with the module that defines them
    (``models=``): a name is looked up there when it is first read, so a table loads no model
    before a message of its method needs one. Immutable; equal when its fields are.
    """

    __slots__ = ("_models", "_types", "cancelled", "handler", "kind", "method", "notification")

    method: str
    kind: Literal["request", "notification"]
    handler: str
    cancelled: Any
    """The method's own answer to a request the peer cancels (JSON), or None for -32800."""
    notification: MethodSpec | None
    """For a request whose name the side also handles as a notification (a message of that name
    without an id): that notification's spec, which the dispatcher uses for it; else None."""
    _types: tuple[Any, Any]  # (params, result): types, or names in `_models` not looked up yet
    _models: ModuleType | None  # None once the names are looked up

    def __init__(
        self,
        method: str,
        kind: Literal["request", "notification"],
        params: Any,
        result: Any,
        handler: str,
        cancelled: Any = None,
        *,
        models: ModuleType | None = None,
        notification: MethodSpec | None = None,
    ) -> None:
        for name, value in (
            ("method", method),
            ("kind", kind),
            ("handler", handler),
            ("cancelled", cancelled),
            ("notification", notification),
            ("_types", (params, result)),
            ("_models", models),
        ):
            object.__setattr__(self, name, value)

    def with_notification(self, notification: MethodSpec) -> MethodSpec:
        """A copy of this request's spec that also dispatches a notification of the same name to
        `notification` (its types are not looked up: a generated table builds this at import)."""
        params, result = self._types
        return MethodSpec(
            self.method,
            self.kind,
            params,
            result,
            self.handler,
            self.cancelled,
            models=self._models,
            notification=notification,
        )

    @property
    def params(self) -> Any:
        """The type the params of a message are validated into (None: the method has none)."""
        if self._models is not None:
            self._resolve()
        return self._types[0]

    @property
    def result(self) -> Any:
        """The type of a request's result (None for a notification or an empty result)."""
        if self._models is not None:
            self._resolve()
        return self._types[1]

    def _resolve(self) -> None:
        """Look the named types up in `_models`, both at once (a request's answer follows it)."""
        models = self._models
        types = tuple(
            getattr(models, value) if isinstance(value, str) else value for value in self._types
        )
        # every reader resolves to the same classes: no lock needed
        object.__setattr__(self, "_types", types)
        object.__setattr__(self, "_models", None)

    __match_args__ = ("method", "kind", "params", "result", "handler", "cancelled")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled and copied with its types looked up (a module does not pickle)."""
        return (_method_spec, (*self._fields(), self.notification))

    def __replace__(self, **changes: Any) -> MethodSpec:
        """A copy with some fields changed (`copy.replace`, Python 3.13)."""
        fields = dict(zip(self.__match_args__, self._fields(), strict=True))
        return MethodSpec(**{**fields, "notification": self.notification, **changes})

    def _fields(self) -> tuple[Any, ...]:
        return (self.method, self.kind, self.params, self.result, self.handler, self.cancelled)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"MethodSpec is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"MethodSpec is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MethodSpec):
            return NotImplemented
        return self._fields() == other._fields() and self.notification == other.notification

    def __hash__(self) -> int:
        return hash((self.method, self.kind, self.handler))

    def __repr__(self) -> str:
        method, kind, params, result, handler, cancelled = self._fields()
        return (
            f"MethodSpec(method={method!r}, kind={kind!r}, params={params!r}, result={result!r},"
            f" handler={handler!r}, cancelled={cancelled!r})"
        )


MethodRow = tuple[str, str | None, str | None, str] | tuple[str, str | None, str | None, str, Any]
"""One method of a generated table: (wire name, params type name, result type name, handler
method[, the method's answer to a request the peer cancels])."""


def method_table(
    models: ModuleType, kind: Literal["request", "notification"], *rows: MethodRow
) -> Mapping[str, MethodSpec]:
    """A read-only table of `kind` methods whose types are named in `models` (looked up when a
    message of the method first needs them), by wire name."""
    table = {
        row[0]: MethodSpec(
            row[0], kind, row[1], row[2], row[3], row[4] if len(row) > 4 else None, models=models
        )
        for row in rows
    }
    return MappingProxyType(table)


def handled_methods(
    notifications: Mapping[str, MethodSpec], requests: Mapping[str, MethodSpec]
) -> Mapping[str, MethodSpec]:
    """Everything a side handles, by wire name, read-only: a name that is both a request and a
    notification maps to the request, which dispatches a message without an id to the
    notification (`MethodSpec.notification`)."""
    table = {**notifications, **requests}
    for name in notifications.keys() & requests.keys():
        table[name] = requests[name].with_notification(notifications[name])
    return MappingProxyType(table)


def _method_spec(*fields: Any) -> MethodSpec:
    """A `MethodSpec` from `__reduce__`'s fields (the notification last)."""
    *own, notification = fields
    return MethodSpec(*own, notification=notification)


class RpcError(Exception):
    """A JSON-RPC error: raised by handlers to answer with it, and by calls the peer refused."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def __repr__(self) -> str:
        return f"RpcError({self.code!r}, {self.message!r}, {self.data!r})"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form of the error object (``data`` is omitted when None)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        """Build the standard -32601 error for ``method``."""
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RpcError:
        """Build the standard -32602 error."""
        return cls(INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RpcError:
        """Build the standard -32603 error."""
        return cls(INTERNAL_ERROR, "Internal error", data)


class ResultValidationError(ValueError):
    """The peer's result for an outbound request does not match the declared result type."""

    def __init__(self, method: str, error: pydantic.ValidationError) -> None:
        super().__init__(f"invalid result for {method!r}: {error}")
        self.method = method
        self.error = error


class ReaderLike(Protocol):
    """Byte source frames are read from; ``asyncio.StreamReader`` fits."""

    async def read(self, n: int = -1) -> bytes:
        """Return up to ``n`` bytes, ``b""`` at end of stream."""
        ...


class WriterLike(Protocol):
    """Byte sink frames are written to; ``asyncio.StreamWriter`` fits.

    A sink that cuts a peer off itself when its output stalls (its ``drain`` raising
    ``ConnectionError``) may say so with a class attribute ``bounds_stalls = True``: the
    connection then awaits its ``drain`` without a ``write_stall_timeout`` of its own."""

    def write(self, data: bytes) -> None:
        """Queue ``data`` for writing."""
        ...

    async def drain(self) -> None:
        """Wait until the write buffer may take more data."""
        ...

    def close(self) -> None:
        """Close the sink."""
        ...


def default_order_key(method: str, params: Any) -> Hashable | None:
    """Order notifications by ``params["sessionId"]``; all others share ``SHARED_ORDER_KEY``."""
    if isinstance(params, dict):
        session_id = params.get("sessionId")
        if isinstance(session_id, str):
            return session_id
    return SHARED_ORDER_KEY


_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


def _adapter(tp: Any) -> pydantic.TypeAdapter[Any]:
    try:
        return _ADAPTERS[tp]
    except KeyError:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(tp)
        _ADAPTERS[tp] = adapter
        return adapter
    except TypeError:  # unhashable type expression: build it uncached
        return pydantic.TypeAdapter(tp)


def _is_model(tp: Any) -> TypeGuard[type[pydantic.BaseModel]]:
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def validate_value(tp: Any, data: Any) -> Any:
    """Validate plain JSON data into ``tp`` (a model class straight through its own validator)."""
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):  # `_is_model`, inlined
        # The class attribute, looked up per call: pydantic replaces it when a model is rebuilt.
        return tp.__pydantic_validator__.validate_python(data)
    return _adapter(tp).validate_python(data)


def _no_params(data: Any) -> None:
    return None


def plain_validator(tp: Any) -> Callable[[Any], Any]:
    """A function validating plain JSON data into ``tp`` (None: the method takes no params, and
    whatever was sent is ignored), for a caller that validates into it again and again.

    For a model class, its validator's ``validate_plain`` if it has one (one argument, no
    options: the generated classes' validator offers it, cheaper than ``validate_python``), else
    its ``validate_python``; taken once, so a model rebuilt later keeps its validator of then.
    """
    if tp is None:
        return _no_params
    if _is_model(tp):
        validator = tp.__pydantic_validator__
        plain: Callable[[Any], Any] | None = getattr(validator, "validate_plain", None)
        return plain if plain is not None else validator.validate_python
    return _adapter(tp).validate_python


def to_jsonable(value: Any, declared: Any = None) -> Any:
    """Convert an outbound value (params or result) to plain JSON data."""
    if value is None:
        return None
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if declared is not None:
        return _adapter(declared).dump_python(value, mode="json", by_alias=True, exclude_unset=True)
    return value


def _to_json(value: Any, declared: Any = None) -> bytes:
    """The compact JSON text of an outbound value: ``to_jsonable`` and encoding in one pass.

    Raises ``ValueError`` for a value JSON cannot hold (``inf``, ``nan``) and, with a
    ``declared`` type, ``TypeError`` (or pydantic's serialization error, a ``ValueError``) for a
    value that is not of that type: it is never sent as if it were.
    """
    if isinstance(value, pydantic.BaseModel):
        if _is_model(declared) and not isinstance(value, declared):
            raise TypeError(f"expected {declared.__name__}, got {type(value).__name__}")
        data = value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_unset=True)
    elif declared is not None:
        data = _adapter(declared).dump_json(
            value, by_alias=True, exclude_unset=True, warnings="error"
        )
    else:
        data = pydantic_core.to_json(value, by_alias=True)
    if not _is_finite_json(data):
        raise ValueError("a non-finite number (inf or nan) cannot be sent: JSON has none")
    return data


def _is_finite_json(data: bytes) -> bool:
    """Whether JSON text holds no ``Infinity``/``NaN`` (only when it might is it parsed again)."""
    # `partition`, not `in` (which first tries the needle as an integer and formats an error)
    if not data.partition(b"Infinity")[1] and not data.partition(b"NaN")[1]:
        return True
    try:
        pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError:
        return False
    return True


def encode_message(message: dict[str, Any]) -> bytes:
    """`message` as one frame: compact JSON and a newline, with fields under their aliases."""
    # Compact JSON; pydantic_core never emits a raw newline (it escapes them inside strings).
    return pydantic_core.to_json(message, by_alias=True) + b"\n"


_METHOD_KEYS: dict[str, bytes] = {}


def _method_key(method: str) -> bytes:
    """``"method":<name>`` as JSON, cached per method name."""
    key = _METHOD_KEYS.get(method)
    if key is None:
        key = b'"method":' + pydantic_core.to_json(method)
        if len(_METHOD_KEYS) < 1024:
            _METHOD_KEYS[method] = key
    return key


def _request_frame(request_id: int, method: str, params: bytes | None) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,' % request_id + _method_key(method)
    if params is None:
        return head + b"}\n"
    return head + b',"params":' + params + b"}\n"


def _notification_frame(method: str, params: bytes | None) -> bytes:
    head = b'{"jsonrpc":"2.0",' + _method_key(method)
    if params is None:
        return head + b"}\n"
    return head + b',"params":' + params + b"}\n"


def _result_frame(request_id: RequestId, result: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + pydantic_core.to_json(request_id)
        + b',"result":'
        + result
        + b"}\n"
    )


def encode_error(request_id: RequestId | None, error: RpcError) -> bytes:
    """The error response frame for `request_id`, without `error.data` if that is not JSON."""
    message = {"jsonrpc": _JSONRPC, "id": request_id, "error": error.to_dict()}
    try:
        frame = encode_message(message)
        if _is_finite_json(frame):
            return frame
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError):
        pass
    # The handler's data cannot be sent as JSON: the error goes without it.
    message["error"] = RpcError(error.code, error.message).to_dict()
    return encode_message(message)


def _invalid_params(exc: pydantic.ValidationError) -> RpcError:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    return RpcError.invalid_params(
        [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in errors]
    )
