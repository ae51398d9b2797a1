"""JSON-RPC 2.0 runtime, inbound dispatch: what each received line is and where it goes.

Owns the step from one line to its effect, synchronously and in arrival order: parse it (a line
that does not parse, or holds a non-finite number, is a parse error; its id and kind are
recovered from its start where possible), tell requests, notifications and responses apart,
validate a request's or notification's params against the method table (a typed notification's
by its worker once its method was seen: ``NotificationQueues``; a handler with
``unlisted_request`` / ``unlisted_notification`` gets every other method raw: a router's), and
hand it on to ``InboundRequests``, ``NotificationQueues`` or ``RequestTable``. Errors the peer
caused are answered with the JSON-RPC codes; responses are never answered, however broken. A
broken response fails the request it answers; when its id cannot be recovered (an error with a
null id included) it fails our one request awaiting an answer, if exactly one does, and is otherwise
logged (``Limits.request_timeout`` bounds the wait of the others).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pydantic
import pydantic_core

from .envelope import (
    _id_in_limits,
    _request_problem,
    _response_problem,
    _sniff_envelope,
    has_non_finite,
    is_request_id,
)
from .framing import (
    CANCEL_REQUEST_METHOD,
    INVALID_REQUEST,
    PARSE_ERROR,
    SHARED_ORDER_KEY,
    MethodSpec,
    OrderKey,
    RequestId,
    RpcError,
    _invalid_params,
    default_order_key,
    encode_error,
    plain_validator,
)
from .limits import _SNIFF_BYTES, Limits
from .log import PeerLog
from .notifications import NotificationQueues
from .outbound import RequestTable
from .requests import InboundRequests


def _is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Dispatcher:
    """Routes the inbound lines of one connection."""

    def __init__(
        self,
        handler: object,
        inbound: Mapping[str, MethodSpec],
        order_key: OrderKey,
        limits: Limits,
        parts: tuple[RequestTable, InboundRequests, NotificationQueues],
        reply: Callable[[bytes], None],
        log: PeerLog,
    ) -> None:
        self._handler = handler
        self._inbound = inbound
        self._order_key = order_key
        self._limits = limits
        self._table, self._requests, self._notifications = parts
        self._reply = reply
        self._log = log
        # Typed notifications seen so far: method -> (handler's name, params validator).
        self._routes: dict[str, tuple[str, Callable[[Any], Any]]] = {}
        # Typed requests seen so far: method -> (its spec, params validator).
        self._request_routes: dict[str, tuple[MethodSpec, Callable[[Any], Any]]] = {}

    def _reply_error(self, request_id: RequestId | None, error: RpcError) -> None:
        self._reply(encode_error(request_id, error))

    # ------------------------------------------------------------------ broken lines

    def oversized(self, head: bytes) -> None:
        """A line over ``max_line_bytes`` (``head`` is its start)."""
        limit = self._limits.max_line_bytes
        self._log.warning("oversized", "discarding a line longer than %d bytes", limit)
        error = RpcError(
            INVALID_REQUEST,
            f"Frame too large: lines are limited to {limit} bytes",
            {"maxLineBytes": limit},
        )
        request_id, kind = _sniff_envelope(head)
        if kind == "response":
            self._fail_response(request_id, error)
        else:
            self._reply_error(self._echoable(request_id), error)

    def _echoable(self, request_id: RequestId | None) -> RequestId | None:
        if request_id is None or not _id_in_limits(request_id, self._limits.max_id_chars):
            return None
        return request_id

    def _unparseable(self, line: bytes | bytearray, reason: str) -> None:
        self._log.warning("parse", "unparseable line from peer: %s", reason)
        request_id, kind = _sniff_envelope(bytes(line[:_SNIFF_BYTES]))
        if kind == "response":
            error = RpcError(
                PARSE_ERROR, f"Parse error: the peer's response is not JSON ({reason})"
            )
            self._fail_response(request_id, error)
        else:
            reply_id = self._echoable(request_id) if kind == "request" else None
            self._reply_error(reply_id, RpcError(PARSE_ERROR, "Parse error", reason))

    def _fail_response(self, request_id: Any, error: RpcError) -> None:
        if type(request_id) is int and self._table.fail(request_id, error):
            return
        if request_id is None:
            only = self._table.only_unanswered()
            if only is not None:
                self._table.fail(only, error)
                return
            self._log.warning(
                "unmatched",
                "response without a usable id matches none of %d pending requests: %s",
                len(self._table),
                error.message,
            )
            return
        self._log.warning(
            "unknown-id", "broken response for unknown id %s: %s", _short(request_id), error.message
        )

    # ------------------------------------------------------------------ lines

    def line(self, line: bytes | bytearray) -> None:
        """Handle one complete line."""
        try:
            message = pydantic_core.from_json(line, allow_inf_nan=False)
        except ValueError as exc:
            if line and not line.isspace():
                self._unparseable(line, str(exc))
            return
        if type(message) is not dict:  # (the parser builds plain dicts)
            text = (
                "Invalid Request: batches are not supported"
                if isinstance(message, list)
                else "Invalid Request: a message must be a JSON object"
            )
            self._reply_error(None, RpcError(INVALID_REQUEST, text))
            return
        if has_non_finite(line, message):
            self._non_finite(message, _is_response(message))
            return
        method = message.get("method")
        if (
            type(method) is str
            and "id" not in message
            and type(params := message.get("params")) is dict
            and message.get("jsonrpc") == "2.0"
        ):
            # The common message, a well-formed notification with params: straight on (the
            # envelope checks of `_request_problem` all pass for it).
            try:
                self._notification(method, params)
            except Exception:  # noqa: BLE001 (as in `_message`)
                self._log.exception("dispatch", "dispatching %s failed", method)
        elif _is_response(message):
            self._response(message)
        else:
            self._message(message)

    def _non_finite(self, message: dict[str, Any], is_response: bool) -> None:
        reason = "a number out of range (JSON has no infinity)"
        if is_response:
            error = RpcError(PARSE_ERROR, f"Parse error: the peer's response holds {reason}")
            self._fail_response(message.get("id"), error)
        elif "id" in message:
            raw_id = message["id"]
            reply_id = self._echoable(raw_id) if is_request_id(raw_id) else None
            self._reply_error(reply_id, RpcError(PARSE_ERROR, "Parse error", reason))
        else:
            self._log.warning("parse", "notification with %s dropped", reason)

    def _message(self, message: dict[str, Any]) -> None:
        problem = _request_problem(message, self._limits.max_id_chars)
        if problem is not None:
            raw_id = message.get("id")
            reply_id = self._echoable(raw_id) if is_request_id(raw_id) else None
            self._reply_error(reply_id, RpcError(INVALID_REQUEST, problem))
            return
        method: str = message["method"]
        params = message.get("params")
        try:
            if "id" in message:  # checked above: an id within the limits, echoed as it came
                self._request(message["id"], method, params)
            else:
                self._notification(method, params)
        # e.g. a validator or order_key raising something unexpected: logged with its traceback
        except Exception:  # noqa: BLE001
            self._log.exception("dispatch", "dispatching %s failed", method)
            if "id" in message:
                self._reply_error(message["id"], RpcError.internal_error())

    def _response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        problem = _response_problem(message)
        if problem is not None:
            self._log.warning("bad-response", "malformed response from peer: %s", problem)
            self._fail_response(
                request_id, RpcError(INVALID_REQUEST, f"Invalid Response: {problem}")
            )
            return
        if "error" in message:
            obj = message["error"]
            error = RpcError(obj["code"], obj["message"], obj.get("data"))
            if request_id is None:
                self._fail_response(None, error)
            else:
                self._table.answer(request_id, None, error)
        else:
            self._table.answer(request_id, message["result"], None)

    # ------------------------------------------------------------------ requests, notifications

    def _request(self, request_id: RequestId, method: str, params: Any) -> None:
        route = self._request_routes.get(method)
        if route is not None:  # a typed request seen before: its spec and params validator
            known, validate = route
            found = getattr(self._handler, known.handler, None)
            if found is not None:
                try:
                    value = validate({} if params is None else params)
                except pydantic.ValidationError as exc:
                    self._reply_error(request_id, _invalid_params(exc))
                    return
                self._requests.start(request_id, method, found, (value,), known)
                return
        function: Callable[..., Awaitable[Any]]
        args: tuple[Any, ...]
        spec = self._inbound.get(method)
        if spec is not None:
            # The table reflects the receiving side (e.g. mcp/message is a request one way and a
            # notification the other), so its kind wins; a mismatch is an invalid message.
            if spec.kind != "request":
                text = f"Invalid Request: {method} is a notification"
                self._reply_error(request_id, RpcError(INVALID_REQUEST, text))
                return
            found = getattr(self._handler, spec.handler, None)
            if found is None:
                self._reply_error(request_id, RpcError.method_not_found(method))
                return
            validate = plain_validator(spec.params)
            if len(self._request_routes) < len(self._inbound):
                self._request_routes[method] = (spec, validate)
            try:
                value = validate({} if params is None else params)
            except pydantic.ValidationError as exc:
                self._reply_error(request_id, _invalid_params(exc))
                return
            function, args = found, (value,)
        elif method == CANCEL_REQUEST_METHOD:
            text = f"Invalid Request: {method} is a notification"
            self._reply_error(request_id, RpcError(INVALID_REQUEST, text))
            return
        elif (unlisted := getattr(self._handler, "unlisted_request", None)) is not None:
            # A router (a proxy, a conductor) takes every request its table does not list, raw.
            function, args = unlisted, (method, params)
        else:
            hook = getattr(self._handler, "extension_request", None)
            if not method.startswith("_") or hook is None:
                self._reply_error(request_id, RpcError.method_not_found(method))
                return
            function, args = hook, (method, params)
        self._requests.start(request_id, method, function, args, spec)

    def _notification(self, method: str, params: Any) -> None:
        route = self._routes.get(method)
        if route is not None:  # a typed notification seen before: its handler and validator
            name, validate = route
            function = getattr(self._handler, name, None)
            if function is not None:
                # Validated by its worker just before its handler runs: while a long read is cut
                # into lines, what waits in the queues is the parsed JSON, not models (which
                # the garbage collector would traverse again and again).
                self._submit(method, params, function, {} if params is None else params, validate)
                return
        self._other_notification(method, params)

    def _submit(
        self,
        method: str,
        params: Any,
        function: Callable[..., Awaitable[Any]],
        args: Any,
        validate: Callable[[Any], Any] | None = None,
    ) -> None:
        order_key = self._order_key
        if order_key is default_order_key and type(params) is dict:
            # `default_order_key`, inlined (the same result for a dict)
            key = params.get("sessionId")
            if not isinstance(key, str):
                key = SHARED_ORDER_KEY
        else:
            try:
                key = order_key(method, params)
            except Exception:  # noqa: BLE001 (logged with its traceback)
                self._log.exception("order-key", "order_key failed for %s", method)
                key = SHARED_ORDER_KEY
        self._notifications.submit(key, method, function, args, validate)

    def _other_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST_METHOD:
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if not is_request_id(request_id):
                self._log.warning("cancel", "%s without a valid requestId ignored", method)
            elif not self._requests.cancel(request_id):
                self._log.debug(
                    "cancel",
                    "cancel for unknown or finished request %s ignored",
                    _short(request_id),
                )
            if method not in self._inbound:
                return  # a table may still name a handler for it: then it is told too
        function: Callable[..., Awaitable[Any]] | None
        args: tuple[Any, ...]
        spec = self._inbound.get(method)
        if spec is not None and spec.kind != "notification" and spec.notification is not None:
            spec = spec.notification  # the side handles the name both ways: no id, the notification
        if spec is not None:
            if spec.kind != "notification":
                self._log.warning(
                    "kind", "request method %s received without an id; dropped", method
                )
                return
            function = getattr(self._handler, spec.handler, None)
            if function is None:
                self._log.debug("unhandled", "no handler for notification %s; ignored", method)
                return
            validate = plain_validator(spec.params)
            if method != CANCEL_REQUEST_METHOD and len(self._routes) < len(self._inbound):
                self._routes[method] = (spec.handler, validate)
            try:
                value = validate({} if params is None else params)
            except pydantic.ValidationError as exc:
                self._log.warning(
                    "params", "invalid params for notification %s dropped: %s", method, exc
                )
                return
            args = (value,)
        elif (unlisted := getattr(self._handler, "unlisted_notification", None)) is not None:
            function, args = unlisted, (method, params)  # a router's: raw, as for requests
        elif method.startswith("_"):
            function = getattr(self._handler, "extension_notification", None)
            if function is None:
                self._log.debug("unhandled", "extension notification %s ignored", method)
                return
            args = (method, params)
        else:
            self._log.debug("unhandled", "unknown notification %s ignored", _short(method))
            return
        self._submit(method, params, function, args)
