"""The `proxy/successor` envelope of the proxy-chains RFD: wrapping a message for the next hop and
unwrapping it, without touching what it carries, and `SuccessorLink`, which sends wrapped.

A wrapped message's `params` travel as the same JSON value (its own `_meta` and unknown fields
included); the envelope's `_meta` is hop-local and never copied into the message unwrapped.
"""

from __future__ import annotations

from typing import Any, Final

from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    LIMIT_TIMEOUT,
    Connection,
    PeerGoneError,
    RpcError,
    Timeout,
    to_jsonable,
    validate_value,
)

PROXY_INITIALIZE: Final = "proxy/initialize"
"""What a conductor sends a proxy instead of `initialize`: the component has a successor."""

PROXY_SUCCESSOR: Final = "proxy/successor"
"""The one routing method: a proxy sends it to reach its successor, the conductor to deliver a
message from the successor (a request with an id, a notification without)."""

INITIALIZE: Final = "initialize"

MCP_MESSAGE: Final = "mcp/message"
SESSION_SETUP: Final = frozenset(("session/new", "session/load", "session/resume", "session/fork"))
"""The requests that declare a session's MCP servers (`mcpServers`)."""

LEGACY_REQUEST: Final = "_proxy/successor/request"
LEGACY_NOTIFICATION: Final = "_proxy/successor/notification"
"""The earlier draft of the RFD (before `proxy/initialize` and `proxy/successor`), which
conductors such as `@thinkwell/conductor` 0.5 still speak: `initialize` with `_meta.proxy: true`
(answered with `_meta.proxy: true`) and these two envelope methods."""


def is_legacy_initialize(params: Any) -> bool:
    """Whether an `initialize` is the earlier draft's `proxy/initialize` (`_meta.proxy: true`)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("proxy") is True


def supports_mcp_acp(answer: Any) -> bool:
    """Whether an `initialize` answer supports ACP MCP servers (v2: `capabilities.session.mcp.acp`,
    v1: `agentCapabilities.mcpCapabilities.acp`)."""
    found = [
        _at(answer, "capabilities", "session", "mcp", "acp"),
        _at(answer, "agentCapabilities", "mcpCapabilities", "acp"),
    ]
    return any(value is not None and value is not False for value in found)


def _at(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def wrap(method: str, params: Any) -> dict[str, Any]:
    """The params of a `proxy/successor` message carrying `method` with `params` (a model is
    dumped to JSON data; plain data is passed as it is)."""
    envelope: dict[str, Any] = {"method": method}
    if params is not None:
        envelope["params"] = to_jsonable(params)
    return envelope


def unwrap(params: Any) -> tuple[str, Any]:
    """The method and params a `proxy/successor` message carries; -32602 when it carries none."""
    if not isinstance(params, dict) or not isinstance(params.get("method"), str):
        raise RpcError(INVALID_PARAMS, "Invalid params: proxy/successor needs a string `method`")
    return params["method"], params.get("params")


def gone(role: str, exc: PeerGoneError) -> RpcError:
    """The error a hop answers when the component it forwarded to has gone (not a wrapped
    result: the RFD's "errors the conductor returns itself")."""
    return RpcError(INTERNAL_ERROR, f"the {role} is gone: {exc}")


class SuccessorLink:
    """What a typed peer sends on to reach a proxy's successor: every request and notification
    goes to the conductor wrapped in `proxy/successor` (duck-typed as a `Connection`)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.limits = connection.limits
        self.methods = (PROXY_SUCCESSOR, PROXY_SUCCESSOR)
        """The envelope's (request, notification) methods: the earlier draft's after a legacy
        initialize (`LEGACY_REQUEST`, `LEGACY_NOTIFICATION`)."""

    @property
    def closed(self) -> bool:
        """Whether the connection to the conductor has closed."""
        return self.connection.closed

    async def request(
        self, method: str, params: Any, result_type: Any, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send `method` to the successor; its result validated into `result_type` (None: raw)."""
        raw = await self.connection.request(
            self.methods[0], wrap(method, params), None, timeout=timeout
        )
        return raw if result_type is None else validate_value(result_type, raw)

    async def notify(self, method: str, params: Any) -> None:
        """Send notification `method` to the successor."""
        await self.connection.notify(self.methods[1], wrap(method, params))

    async def cancel_request(self, request_id: int | str) -> None:
        """Ask the conductor to cancel one of our `proxy/successor` requests."""
        await self.connection.cancel_request(request_id)
