"""Remote ACP transport, shared by server and client: limits, header names, message sniffing.

Owns ``RemoteLimits`` (one frozen dataclass of every per-connection limit, with the reference
TypeScript SDK's defaults where it has one), the wire names of the Streamable HTTP profile of
the RFD "Streamable HTTP & WebSocket Transport", and the small helpers both sides use to read a
JSON-RPC message's id and session. Standard library and pydantic only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Final

import pydantic_core

ACP_PATH: Final = "/acp"
HEADER_CONNECTION_ID: Final = "acp-connection-id"
HEADER_SESSION_ID: Final = "acp-session-id"
JSON_MIME: Final = "application/json"
EVENT_STREAM_MIME: Final = "text/event-stream"
INITIALIZE_METHOD: Final = "initialize"
# Client requests whose POST must carry Acp-Session-Id (as the reference SDK's list).
SESSION_SCOPED_METHODS: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
# Methods that may name a session this connection does not hold yet: they attach it (load,
# resume) or act on a stored session (delete, archive). The agent authorizes them; the
# transport only refuses a session that another live connection holds.
ATTACH_METHODS: Final = frozenset({"session/load", "session/resume"})
UNHELD_SESSION_METHODS: Final = ATTACH_METHODS | {
    "session/delete",
    "session/archive",
    "session/unarchive",
}
# Whose answer goes to the connection stream although it names a session (the RFD).
CONNECTION_ROUTED_METHODS: Final = frozenset({"session/load"})
# How a notification frame of our own runtime starts: such frames are never responses.
NOTIFICATION_PREFIX: Final = b'{"jsonrpc":"2.0","method":'

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """Limits of the remote transport, per connection and per server (seconds for times, bytes
    for sizes). docs/remote.md "Running on the internet" says what each one defends against."""

    max_buffered_bytes: int = 64 * MiB
    """Output held for one connection's client (all its streams); reference default 64 MiB."""
    max_output_stall: float = 60.0
    """A client that takes none of its output for this long is cut off; reference 60 s."""
    max_buffered_session_streams: int = 1024
    """Session streams holding output with nobody reading them; reference default 1024."""
    max_id_length: int = 1024
    """Longest connection or session id accepted; reference default 1024. Request ids are also
    held to what the runtime accepts (256 characters, signed 64-bit integers): others are
    answered with an error at once."""
    max_request_body_bytes: int = 16 * MiB
    """Largest POST body (413 beyond) and WebSocket text frame; reference default 16 MiB."""
    idle_timeout: float = 900.0
    """A connection with no traffic for this long is closed, open streams or not: a keep-alive
    comment on an SSE stream is not traffic, a message either way is."""
    max_connections: int = 4096
    """Live connections per server process (503 beyond)."""
    max_total_buffered_bytes: int = 256 * MiB
    """Server-wide memory budget: request bodies being read plus every connection's queued input
    and output. A body that does not fit is answered 503; an agent's output waits for room."""
    max_initialize_bytes: int = 1 * MiB
    """Largest body of a POST opening a connection (``initialize``, 413 beyond): what a client
    can make the server hold before it has a connection."""
    setup_timeout: float = 10.0
    """A connection must get past ``initialize``: its answer given within this of opening, and
    one more request made (HTTP) or message sent (WebSocket) within this of the answer.
    Otherwise it is closed, its slot freed."""
    header_timeout: float = 10.0
    """A socket must send a request's headers within this of connecting (or of the previous
    response): silent and slow sockets are closed (``serve_remote``'s servers)."""
    body_timeout: float = 30.0
    """A request body must arrive whole within this of its headers (408 beyond)."""
    shutdown_timeout: float = 10.0
    """On SIGTERM or SIGINT, ``serve_remote`` closes every connection (their streams end, their
    agents are closed and what they leave pending cancelled) and exits 0 within this."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"RemoteLimits.{field.name} must be a positive number")


DEFAULT_LIMITS: Final = RemoteLimits()


def parse_message(frame: bytes | str) -> dict[str, Any] | None:
    """The JSON object of one frame, or None when it is not a JSON object."""
    try:
        value = pydantic_core.from_json(frame, allow_inf_nan=False)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_PARAMS_SESSION_ID: Final = b',"params":{"sessionId":"'


def notification_session_id(frame: bytes) -> str | None:
    """``params.sessionId`` of a notification frame as the runtime writes it
    (``{"jsonrpc":"2.0","method":"M","params":{"sessionId":"S",...``), found without parsing
    it; None for any other frame (parse those): one with an ``"id":`` key anywhere (it may be a
    request, whose id must be noted; inside a JSON string the quotes would be escaped), or an
    escape in the method or the session id."""
    if not frame.startswith(NOTIFICATION_PREFIX) or b'"id":' in frame:
        return None
    start = len(NOTIFICATION_PREFIX) + 1  # past the method's opening quote
    end = frame.find(b'"', start)
    if end < 0 or b"\\" in frame[start:end] or not frame.startswith(_PARAMS_SESSION_ID, end + 1):
        return None
    start = end + 1 + len(_PARAMS_SESSION_ID)
    end = frame.find(b'"', start)
    raw = frame[start:end]
    if end < 0 or b"\\" in raw:
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def params_session_id(message: dict[str, Any]) -> str | None:
    """``params.sessionId`` of a request or notification, when it is a string."""
    params = message.get("params")
    if isinstance(params, dict):
        session_id = params.get("sessionId")
        if isinstance(session_id, str):
            return session_id
    return None


def result_session_id(message: dict[str, Any]) -> str | None:
    """``result.sessionId`` of a response, when it is a string."""
    result = message.get("result")
    if isinstance(result, dict):
        session_id = result.get("sessionId")
        if isinstance(session_id, str):
            return session_id
    return None


def message_id(message: dict[str, Any]) -> int | str | None:
    """The id of a message when it is a valid JSON-RPC id (never a bool)."""
    value = message.get("id")
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value


def is_response(message: dict[str, Any]) -> bool:
    """Whether a message is a response (an id and a result or error, no method)."""
    return "method" not in message and ("result" in message or "error" in message)


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """What an agent can make our remote client hold, in bytes and seconds
    (``connect_*(client_limits=)``).

    Past each one the client refuses with a ``ClientLimitError`` naming the limit: the request it
    concerned fails with it (a JSON-RPC error), or the stream it came on ends (the connection
    stream ends the connection)."""

    max_message_bytes: int = 16 * MiB
    """Largest message: an HTTP response body, one SSE line or event, a WebSocket message."""
    max_error_body_bytes: int = 64 * 1024
    """Most of an HTTP error body read (the rest is not read; 8 kB are kept in the error)."""
    max_session_streams: int = 64
    """Session-scoped SSE streams open at once. A response naming a new session past it opens
    none; posting to a session past it closes the least recently used idle stream (it reopens
    on the session's next message), else fails the message."""
    request_timeout: float = 30.0
    """Seconds to connect, send an HTTP request (a POST, the closing DELETE, a stream's GET) and
    read its answer; each read of a body waits at most this long for its next bytes. A POST
    left unanswered fails its message and ends the connection (whether the agent got it is
    unknown); closing never waits longer than this on the DELETE."""
    stream_idle_timeout: float | None = None
    """Seconds an SSE stream may stay silent (no event, no keep-alive comment) before it counts
    as dead: the connection stream ends the connection, a session stream fails the requests
    awaiting their answer on it. None (the default): streams may stay silent, as the transport
    RFD leaves keep-alives to implementations (``serve_remote`` sends one every 15 s, so 60
    suits it)."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name.endswith("_timeout"):
                if value is None and field.name == "stream_idle_timeout":
                    continue
                if not (isinstance(value, int | float) and not isinstance(value, bool)):
                    raise ValueError(f"ClientLimits.{field.name} must be a positive number")
                if not (math.isfinite(value) and value > 0):
                    raise ValueError(f"ClientLimits.{field.name} must be a positive number")
            elif not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
                raise ValueError(f"ClientLimits.{field.name} must be a positive integer")


DEFAULT_CLIENT_LIMITS: Final = ClientLimits()
