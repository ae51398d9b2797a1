"""The `proxy/successor` envelope of the proxy-chains RFD: wrapping a message for the next hop and
unwrapping it, without touching what it carries.

A wrapped message's `params` travel as the same JSON value (its own `_meta` and unknown fields
included); the envelope's `_meta` is hop-local and never copied into the message unwrapped.
"""

from __future__ import annotations

from typing import Any, Final

from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, PeerGoneError, RpcError, to_jsonable

PROXY_INITIALIZE: Final = "proxy/initialize"
"""What a conductor sends a proxy instead of `initialize`: the component has a successor."""

PROXY_SUCCESSOR: Final = "proxy/successor"
"""The one routing method: a proxy sends it to reach its successor, the conductor to deliver a
message from the successor (a request with an id, a notification without)."""

INITIALIZE: Final = "initialize"


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
