"""JSON-RPC 2.0 runtime, message checks: envelopes, ids, non-finite numbers, broken lines.

Owns the judgement of one inbound message before anything acts on it: whether a request's or a
response's envelope is valid, whether an id is acceptable under the ``Limits``, whether parsed
JSON holds a non-finite number (``1e999`` parses to infinity: refused like unparseable input),
and the best-effort
id and kind of a line that cannot be parsed or is too long. Pure functions, no state.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final, Literal, TypeAlias, TypeGuard

import pydantic_core

from .framing import RequestId

_JSONRPC: Final = "2.0"
_INT64: Final = 1 << 63
LineKind: TypeAlias = Literal["request", "response", "unknown"]


def is_request_id(value: Any) -> TypeGuard[RequestId]:
    """Whether `value` has a JSON-RPC id's type: an integer (not a bool) or a string."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _id_in_limits(value: RequestId, max_chars: int) -> bool:
    """Whether an id of the right type is also small enough to be kept and echoed."""
    if isinstance(value, str):
        return len(value) <= max_chars
    return -_INT64 <= value < _INT64


# Whether a number literal may overflow to infinity is told from the line's shape: every digit
# made "0", "e", "E" and "+" made "e", every other byte a space. A float overflows past 1.8e308
# only with an exponent of three digits or more ("e000" in the shape, "ee000" with a "+") or with a
# mantissa whose integer part and an exponent of at most two digits (<= 99) reach 309 digits: then
# the mantissa is a run of at least 210 digits (a run of 32 zeros in the shape, found by a short
# search). Only a line with such a shape is walked. Telling it costs one translation and two
# searches that skip ahead on the spaces (a regular expression scan costs several times more),
# by `partition`: `bytes in bytes` first tries the needle as an integer and formats an error, and
# `find` parses its arguments as a tuple (each about twice the search itself here).
_NUMBER_SHAPE: Final = bytes(
    0x30 if 0x30 <= byte <= 0x39 else 0x65 if byte in b"eE+" else 0x20 for byte in range(256)
)
_LONG_MANTISSA: Final = b"0" * 32


def has_non_finite(line: bytes | bytearray, message: Any) -> bool:
    """Whether ``message`` (parsed from ``line``) holds infinity: JSON has no such number."""
    shape = line.translate(_NUMBER_SHAPE)
    if not shape.partition(b"e000")[1] and not shape.partition(_LONG_MANTISSA)[1]:
        return False  # no number in the line can overflow
    stack = [message]
    while stack:
        value = stack.pop()
        if type(value) is float:
            if not math.isfinite(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


# Tokens of a (possibly truncated or broken) JSON text: complete strings, structural characters
# and numbers; anything else is skipped. A lone quote is an unterminated string: scanning stops.
_SNIFF_TOKEN: Final = re.compile(
    rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|"'
)


def _sniff_envelope(head: bytes) -> tuple[RequestId | None, LineKind]:
    """Best effort on the start of a line that was not parsed: (top-level id, kind of message)."""
    tokens = _SNIFF_TOKEN.findall(head)
    if not tokens or tokens[0] != b"{":
        return None, "unknown"
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
                    if is_request_id(candidate):
                        request_id = candidate
    if has_method:
        return request_id, "request"
    return request_id, "response" if has_outcome else "unknown"


def _request_problem(message: dict[str, Any], max_id_chars: int) -> str | None:
    if message.get("jsonrpc") != _JSONRPC:
        return 'Invalid Request: "jsonrpc" must be "2.0"'
    if not isinstance(message.get("method"), str):
        return 'Invalid Request: "method" must be a string'
    if "id" in message:
        request_id = message["id"]
        if not is_request_id(request_id):
            return 'Invalid Request: "id" must be a string or an integer'
        if not _id_in_limits(request_id, max_id_chars):
            return (
                f'Invalid Request: "id" too large (strings up to {max_id_chars} characters, '
                "integers within 64 bits)"
            )
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
        if request_id is not None and not is_request_id(request_id):
            return '"id" must be a string, an integer or null'
    elif not is_request_id(request_id):
        return '"id" must be a string or an integer'
    return None
