"""JSON-RPC 2.0 runtime, wire level: error codes and errors, method specs, framing, validation.

Owns what a message is on the wire: the JSON-RPC error codes and ``RpcError``, ``MethodSpec``
(how an inbound method is validated and dispatched), the reader/writer protocols, the order key
of notifications, the conversion of values to and from JSON through pydantic, the one-line
frames of requests, notifications, results and errors, and the checks of a message's envelope
(including the best-effort id of an oversized line). No I/O and no state beyond caches.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
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
DEFAULT_MAX_LINE_BYTES: Final = 50 * 1024 * 1024
SHARED_ORDER_KEY: Final = ("$shared",)

_JSONRPC: Final = "2.0"
# Bytes asked of the reader per read; also the StreamReader limit (a flow-control window only:
# line framing is done here, so a line may be far longer than this).
_READ_CHUNK: Final = 256 * 1024
# How much of an oversized line is kept to recover its id for the error answer.
_SNIFF_BYTES: Final = 4096
# Cancelled outbound request ids remembered to silence their late answers (then forgotten).
_ABANDONED_MAX: Final = 1024
# Notification workers kept waiting for more messages of their order key (per connection).
_IDLE_WORKERS_MAX: Final = 64

RequestId: TypeAlias = int | str
OrderKey: TypeAlias = Callable[[str, Any], Hashable | None]
Job: TypeAlias = tuple[str, Callable[..., Awaitable[Any]], tuple[Any, ...]]
"""A queued notification: (method, handler, handler arguments)."""


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """How one inbound method is validated and dispatched to its handler."""

    method: str
    kind: Literal["request", "notification"]
    params: Any
    result: Any
    handler: str
    cancelled: Any = None
    """The method's own answer to a request the peer cancels (JSON), or None for -32800."""


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
    """Byte sink frames are written to; ``asyncio.StreamWriter`` fits."""

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


def _validate(tp: Any, data: Any) -> Any:
    """Validate plain JSON data into ``tp`` (a model class straight through its own validator)."""
    if _is_model(tp):
        # The class attribute, looked up per call: pydantic replaces it when a model is rebuilt.
        return tp.__pydantic_validator__.validate_python(data)
    return _adapter(tp).validate_python(data)


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
    """The compact JSON text of an outbound value: ``to_jsonable`` and encoding in one pass."""
    if isinstance(value, pydantic.BaseModel):
        return value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_unset=True)
    if value is not None and declared is not None:
        return _adapter(declared).dump_json(value, by_alias=True, exclude_unset=True)
    return pydantic_core.to_json(value, by_alias=True)


def _frame(message: dict[str, Any]) -> bytes:
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


def _error_frame(request_id: RequestId | None, error: RpcError) -> bytes:
    message = {"jsonrpc": _JSONRPC, "id": request_id, "error": error.to_dict()}
    try:
        return _frame(message)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError):
        message["error"] = RpcError(error.code, error.message, repr(error.data)).to_dict()
        return pydantic_core.to_json(message, fallback=repr) + b"\n"


def _is_id(value: Any) -> TypeGuard[RequestId]:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _exception_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(exc)).strip()


# Tokens of a (possibly truncated) JSON text: complete strings, structural characters and
# numbers. A lone quote is an unterminated string: scanning stops there.
_SNIFF_TOKEN: Final = re.compile(
    rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|"'
)


def _sniff_envelope(head: bytes) -> tuple[RequestId | None, bool]:
    """Best effort on the start of an oversized line: (top-level id, looks like a response)."""
    tokens = _SNIFF_TOKEN.findall(head)
    if not tokens or tokens[0] != b"{":
        return None, False
    depth = 0
    request_id: RequestId | None = None
    has_method = has_outcome = False
    for i, token in enumerate(tokens):
        if token == b'"':
            break
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
        elif (
            depth == 1
            and token[:1] == b'"'
            and tokens[i - 1] in (b"{", b",")
            and i + 2 < len(tokens)
            and tokens[i + 1] == b":"
        ):
            key = token[1:-1]
            if key == b"method":
                has_method = True
            elif key in (b"result", b"error"):
                has_outcome = True
            elif key == b"id":
                value = tokens[i + 2]
                # a number at the very end of the head may be cut short: only trust it if
                # another token follows it
                if value[:1] == b'"' or i + 3 < len(tokens):
                    try:
                        candidate = pydantic_core.from_json(value)
                    except ValueError:
                        candidate = None
                    if _is_id(candidate):
                        request_id = candidate
    return request_id, has_outcome and not has_method


def _request_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != _JSONRPC:
        return 'Invalid Request: "jsonrpc" must be "2.0"'
    if not isinstance(message.get("method"), str):
        return 'Invalid Request: "method" must be a string'
    if "id" in message and not _is_id(message["id"]):
        return 'Invalid Request: "id" must be a string or an integer'
    if "params" in message and not isinstance(message["params"], dict | list):
        return 'Invalid Request: "params" must be an object or an array'
    return None


def _response_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != _JSONRPC:
        return '"jsonrpc" must be "2.0"'
    if ("result" in message) == ("error" in message):
        return 'exactly one of "result" and "error" is required'
    if "id" not in message:
        return '"id" is required'
    request_id = message["id"]
    if "error" in message:
        error = message["error"]
        if not (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and not isinstance(error.get("code"), bool)
            and isinstance(error.get("message"), str)
        ):
            return '"error" must be an object with an integer "code" and a string "message"'
        if request_id is not None and not _is_id(request_id):
            return '"id" must be a string, an integer or null'
    elif not _is_id(request_id):
        return '"id" must be a string or an integer'
    return None


def _invalid_params(exc: pydantic.ValidationError) -> RpcError:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    return RpcError.invalid_params(
        [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in errors]
    )
