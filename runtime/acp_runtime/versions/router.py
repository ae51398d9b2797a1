"""Agent side of several protocol versions on one connection: ``VersionRouter``, ``serve_versions``.

One agent process serves ACP v1 and v2 clients: the router reads the connection's lines itself
until the first valid ``initialize``, picks the implementation for the version asked for, and
hands that package's ``Connection`` a reader that replays the (normalised) ``initialize`` and
every byte read after it. The semantics are those of the reference TypeScript SDK's
``AgentProtocolRouter`` (2.4.0):

* Before initialization, notifications and responses are ignored, other requests get -32600, a
  batch gets one -32600 with ``id: null``, a line that is not JSON gets -32700, and an
  ``initialize`` that fails (malformed params, an unsupported version) gets an error response.
  None of these closes the connection: the client may send ``initialize`` again.
* Selection (decision, following the pinned draft schema's ``InitializeResponse.protocolVersion``
  text, which the reference router implements): the highest configured version at or below the
  requested one; a request newer than every configured version gets the newest; when no
  configured version is at or below the requested one, -32022 with the supported versions. A
  v1-only router keeps v1's own rule (the agent answers with the latest version it supports), so
  it selects v1 for any requested version, as the reference router does.
* Params for exactly the selected version are validated strictly by the selected package (-32602
  when they do not parse). When downgrading, what does not parse is dropped instead: a missing
  or malformed v2 ``info`` becomes ``{"name": "unknown", "version": "unknown"}`` for a v2 route
  and is omitted for v1 (where ``clientInfo`` is optional); v2 capabilities map to v1's. The
  routed ``initialize`` carries the selected version as its ``protocolVersion``.
* On a v2 route the ``initialize`` id must be a string or an integer. A connection is never
  re-routed: a repeated ``initialize`` goes to the selected implementation.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Unpack

import pydantic
import pydantic_core

from ..jsonrpc import (
    DEFAULT_LIMITS,
    INVALID_REQUEST,
    PARSE_ERROR,
    Connection,
    ConnectionOptions,
    ReaderLike,
    RequestId,
    RpcError,
    WriterLike,
    encode_error,
    encode_message,
    is_request_id,
    open_pipe_reader,
    open_pipe_writer,
    validate_value,
)
from ..peers import AgentHandler, PeerBase
from .lines import LineReader, is_protocol_version, write_frame

logger = logging.getLogger(__name__)

UNSUPPORTED_PROTOCOL_VERSION = -32022
UNKNOWN_IMPLEMENTATION: Mapping[str, str] = {"name": "unknown", "version": "unknown"}

H = TypeVar("H", bound="AgentHandler[PeerBase]")
"""The agent handlers a router is given (of every protocol version)."""

Handlers = Mapping[int, H | Callable[[], H]]
"""Per protocol version: an agent handler, or a zero-argument factory (such as the handler's
class) making one per connection."""


@dataclass(frozen=True)
class Routed(Generic[H]):
    """A connection routed to one version: its ``Connection`` (not running yet) and handler."""

    version: int
    handler: H
    connection: Connection


@dataclass(frozen=True)
class _Reject:
    request_id: RequestId | None
    error: RpcError


@dataclass(frozen=True)
class _Accept:
    request_id: RequestId
    requested: int
    selected: int
    params: dict[str, Any]


def _invalid_request(data: Any = None, more: str | None = None) -> RpcError:
    return RpcError(INVALID_REQUEST, "Invalid request" + (f": {more}" if more else ""), data)


def _invalid_version() -> RpcError:
    return RpcError.invalid_params(
        "initialize.protocolVersion must be a valid ACP protocol version"
    )


def _is_implementation(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
        and isinstance(value.get("title", ""), (str, type(None)))
    )


def _v2_to_v1(params: dict[str, Any]) -> dict[str, Any]:
    """A v2 ``initialize`` as v1 params: what has no v1 form is dropped."""
    capabilities = params.get("capabilities")
    capabilities = capabilities if isinstance(capabilities, dict) else {}
    auth = capabilities.get("auth")
    auth = auth if isinstance(auth, dict) else {}
    v1_auth: dict[str, Any] = {"terminal": auth.get("terminal") is not None}
    if isinstance(auth.get("_meta"), dict):
        v1_auth["_meta"] = auth["_meta"]
    v1_caps: dict[str, Any] = {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "auth": v1_auth,
    }
    for key in ("elicitation", "_meta"):
        if capabilities.get(key) is not None:
            v1_caps[key] = capabilities[key]
    result: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": v1_caps}
    if _is_implementation(params.get("info")):
        result["clientInfo"] = params["info"]
    if isinstance(params.get("_meta"), dict):
        result["_meta"] = params["_meta"]
    return result


class VersionRouter(Generic[H]):
    """Routes each connection to the implementation of the version its first ``initialize`` names.

    ``versions`` maps each protocol version to its agent handler (one instance shared by every
    connection) or to a factory called once per connection (the handler's class, say);
    ``options`` go to each routed ``Connection`` (its ``max_line_bytes``, or its ``limits``'
    one, also bounds the lines read before ``initialize``).
    """

    def __init__(self, versions: Handlers[H], **options: Unpack[ConnectionOptions]) -> None:
        if not versions:
            raise ValueError("configure at least one protocol version")
        for version, value in versions.items():
            if not is_protocol_version(version) or version == 0:
                raise ValueError(f"not an ACP protocol version: {version!r}")
            if not (isinstance(value, AgentHandler) or callable(value)):
                raise TypeError(
                    f"version {version}: expected an agent handler (a subclass instance of a "
                    f"generated package's Agent) or a factory making one, got {value!r}"
                )
        self.versions: dict[int, H | Callable[[], H]] = dict(versions)
        limits = options.get("limits") or DEFAULT_LIMITS
        self.max_line_bytes: int = options.get("max_line_bytes") or limits.max_line_bytes
        self.options = options  # passed on to the selected version's Connection

    def select(self, requested: int) -> int | None:
        """The version that serves a client asking for ``requested`` (None: none does)."""
        if set(self.versions) == {1}:
            return 1  # v1's own rule: answer with the latest supported version
        at_or_below = [v for v in self.versions if v <= requested]
        return max(at_or_below) if at_or_below else None

    def _handler(self, version: int) -> H:
        value = self.versions[version]
        if isinstance(value, AgentHandler):
            return value
        made = value()
        if not isinstance(made, AgentHandler):
            raise TypeError(f"version {version}: the factory made {made!r}, not an agent handler")
        return made

    @staticmethod
    def _initialize_params(handler: H, accept: _Accept) -> Any:
        """The ``initialize`` params for the selected version (raises when they do not parse)."""
        spec = handler.inbound_methods["initialize"]
        params = accept.params
        if accept.selected == 1 and accept.requested >= 2:
            params = _v2_to_v1(params)
        elif accept.selected < accept.requested:
            info = params.get("info")
            params = {
                **params,
                "info": info if _is_implementation(info) else UNKNOWN_IMPLEMENTATION,
            }
        params = {**params, "protocolVersion": accept.selected}
        if spec.params is None:
            return params
        model = validate_value(spec.params, params)
        return model.to_dict() if hasattr(model, "to_dict") else params

    def decide(self, line: bytes) -> _Reject | _Accept | None:
        """What to do with one line before initialization.

        Reject it, route it, or ignore it (None).
        """
        try:
            message = pydantic_core.from_json(line, allow_inf_nan=False)
        except ValueError as exc:
            if not line.strip():
                return None
            return _Reject(None, RpcError(PARSE_ERROR, "Parse error", str(exc)))
        if isinstance(message, list):
            return _Reject(None, _invalid_request(None, "JSON-RPC batches are not supported"))
        if not isinstance(message, dict):
            return _Reject(
                None, _invalid_request("first ACP message must be an initialize request")
            )
        envelope = message.get("jsonrpc") == "2.0"
        method = message.get("method")
        if envelope and "id" not in message and isinstance(method, str):
            return None  # a notification: nothing awaits an answer yet
        if "method" not in message and (
            "id" in message or "result" in message or "error" in message
        ):
            return None  # a response: nothing was asked yet
        request_id = message.get("id")
        valid_id = request_id is None or is_request_id(request_id) or isinstance(request_id, float)
        if not envelope or "id" not in message or not isinstance(method, str) or not valid_id:
            return _Reject(
                None, _invalid_request("first ACP message must be an initialize request")
            )
        if method != "initialize":
            return _Reject(request_id, _invalid_request("first ACP request must be initialize"))
        params = message.get("params")
        if not isinstance(params, dict) or not is_protocol_version(params.get("protocolVersion")):
            return _Reject(request_id, _invalid_version())
        requested: int = params["protocolVersion"]
        selected = self.select(requested)
        if selected is None:
            data = {"requested": requested, "supported": sorted(self.versions)}
            return _Reject(
                request_id,
                RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data),
            )
        if not is_request_id(request_id):
            if selected >= 2:
                text = "ACP v2 request IDs must be strings or integers"
                return _Reject(None, _invalid_request(None, text))
            return _Reject(
                None, _invalid_request("first ACP message must be an initialize request")
            )
        return _Accept(request_id, requested, selected, params)

    async def route(self, reader: ReaderLike, writer: WriterLike) -> Routed[H] | None:
        """Answer pre-initialize traffic until a valid ``initialize``.

        None when the client left first.

        The returned connection replays the ``initialize`` (normalised for its version) and runs
        from there: call ``run()`` on it (``serve`` does).
        """
        lines = LineReader(reader, self.max_line_bytes)
        while True:
            try:
                line = await lines.readline()
            except EOFError:
                writer.close()
                return None
            if line is None:
                text = f"Frame too large: lines are limited to {self.max_line_bytes} bytes"
                await write_frame(writer, encode_error(None, RpcError(INVALID_REQUEST, text)))
                continue
            decision = self.decide(line)
            if decision is None:
                continue
            if isinstance(decision, _Reject):
                await write_frame(writer, encode_error(decision.request_id, decision.error))
                continue
            handler = self._handler(decision.selected)
            try:
                params = self._initialize_params(handler, decision)
            except pydantic.ValidationError as exc:
                error = RpcError.invalid_params(f"invalid initialize params: {exc}")
                await write_frame(writer, encode_error(decision.request_id, error))
                continue
            initialize = encode_message(
                {
                    "jsonrpc": "2.0",
                    "id": decision.request_id,
                    "method": "initialize",
                    "params": params,
                }
            )
            connection = Connection(
                handler, handler.inbound_methods, lines.rest(initialize), writer, **self.options
            )
            handler.attach(connection)
            logger.debug("routed a connection to protocol version %d", decision.selected)
            return Routed(decision.selected, handler, connection)

    async def serve(self, reader: ReaderLike, writer: WriterLike) -> Routed[H] | None:
        """Route one connection and run it until it closes.

        The transport-independent entry point.
        """
        routed = await self.route(reader, writer)
        if routed is not None:
            await routed.connection.run()
        return routed


async def serve_versions(versions: Handlers[H], **options: Unpack[ConnectionOptions]) -> None:
    """Serve one client over stdin/stdout in the version its ``initialize`` asks for.

    See the module docstring.
    """
    reader = await open_pipe_reader(sys.stdin.buffer)
    writer = await open_pipe_writer(sys.stdout.buffer)
    await VersionRouter(versions, **options).serve(reader, writer)
