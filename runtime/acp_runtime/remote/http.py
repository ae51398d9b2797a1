"""Remote ACP transport, server side: the Streamable HTTP profile (POST, GET as SSE, DELETE).

Owns the RFD's routing table for plain HTTP requests to ``/acp``: content negotiation (415,
406), the identity headers (400 missing, 404 unknown or not this client's; a client's response
without ``Acp-Session-Id`` is taken by its JSON-RPC id only when the app was made with
``correlate_responses_by_id=True``, off by default as the RFD requires the header), batches (501), the
request body limit (413), ``initialize`` answered 200 with its JSON body and
``Acp-Connection-Id``, everything else 202, and the long-lived SSE streams.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import pydantic_core

from .asgi import Receive, Refused, Scope, Send, affinity_header, send_response
from .conn import RemoteConnection
from .limits import (
    ATTACH_METHODS,
    CONNECTION_ROUTED_METHODS,
    EVENT_STREAM_MIME,
    HEADER_CONNECTION_ID,
    HEADER_SESSION_ID,
    INITIALIZE_METHOD,
    JSON_MIME,
    SESSION_SCOPED_METHODS,
    UNHELD_SESSION_METHODS,
    is_response,
    message_id,
    params_session_id,
)
from .pipes import Mailbox

if TYPE_CHECKING:
    from .server import RemoteApp

KEEPALIVE_SECONDS = 15.0


class HttpError(Exception):
    """Answer the request with ``status`` and a one-line text body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def handle_http(app: RemoteApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve one HTTP request to the endpoint."""
    headers = app.checked_headers(scope)
    method = scope["method"]
    try:
        if not app.origin_ok(headers):
            raise HttpError(403, "Forbidden: Origin not allowed")
        if method == "POST":
            await _post(app, headers, receive, send)
        elif method == "GET":
            await _get(app, headers, receive, send)
        elif method == "DELETE":
            connection = await _connection(app, headers)
            connection.close("deleted by the client")
            await send_response(send, 202)
        else:
            await send_response(
                send, 405, b"Method Not Allowed", headers=[(b"allow", b"GET, POST, DELETE")]
            )
    except Refused as exc:
        await send_response(send, exc.status, exc.message.encode())
    except HttpError as exc:
        await send_response(send, exc.status, exc.message.encode())


async def _connection(app: RemoteApp, headers: dict[str, str]) -> RemoteConnection:
    connection_id = headers.get(HEADER_CONNECTION_ID)
    if not connection_id:
        raise HttpError(400, "Missing Acp-Connection-Id")
    if len(connection_id) > app.limits.max_id_length:
        raise HttpError(400, "Acp-Connection-Id exceeds max_id_length")
    principal = await app.authenticate(headers)
    connection = app.registry.get(connection_id, principal)
    if connection is None:
        raise HttpError(404, "Unknown Acp-Connection-Id")
    connection.touch()
    return connection


async def _read_body(app: RemoteApp, headers: dict[str, str], receive: Receive) -> bytes:
    limit = app.limits.max_request_body_bytes
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"Request body exceeds {limit} bytes")
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HttpError(400, "Client disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise HttpError(413, f"Request body exceeds {limit} bytes")
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _post(app: RemoteApp, headers: dict[str, str], receive: Receive, send: Send) -> None:
    content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != JSON_MIME:
        raise HttpError(415, "Unsupported Media Type: POST must be application/json")
    body = await _read_body(app, headers, receive)
    try:
        message: Any = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError:
        raise HttpError(400, "Invalid JSON") from None
    if isinstance(message, list):
        error = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: batches are not supported"},
        }
        await send_response(send, 501, pydantic_core.to_json(error), JSON_MIME)
        return
    if not isinstance(message, dict):
        raise HttpError(400, "Invalid JSON-RPC message: not an object")
    if message.get("method") == INITIALIZE_METHOD:
        if HEADER_CONNECTION_ID in headers:
            raise HttpError(400, "initialize is not allowed on an existing connection")
        await _initialize(app, headers, body, message, send)
        return
    connection = await _connection(app, headers)
    if is_response(message):
        _check_client_response(connection, headers, message, app.correlate_responses_by_id)
    else:
        await _check_request(connection, headers, message)
    frame = body.replace(b"\n", b" ") + b"\n"  # one line: JSON allows any whitespace there
    try:
        await connection.room_for_input()
        connection.inbound.feed(frame)
    except ConnectionError:
        raise HttpError(404, "Unknown Acp-Connection-Id") from None
    await send_response(send, 202)


async def _initialize(
    app: RemoteApp, headers: dict[str, str], body: bytes, message: dict[str, Any], send: Send
) -> None:
    request_id = message_id(message)
    if request_id is None:
        raise HttpError(400, "initialize must be a request with an id")
    connection = await app.open_connection("http", headers)
    connection.initialize_id = request_id
    connection.initial = asyncio.get_running_loop().create_future()
    app.start_agent(connection)
    connection.inbound.feed(body.replace(b"\n", b" ") + b"\n")
    try:
        answer = await connection.initial
    except ConnectionError:
        raise HttpError(500, "Initialize failed: the agent closed the connection") from None
    connection.initial = None
    response_headers = [
        (HEADER_CONNECTION_ID.encode(), connection.id.encode()),
        *affinity_header(app.affinity_cookie),
    ]
    await send_response(send, 200, answer.rstrip(b"\n"), JSON_MIME, response_headers)


def _check_client_response(
    connection: RemoteConnection,
    headers: dict[str, str],
    message: dict[str, Any],
    correlate_by_id: bool,
) -> None:
    """A client's response to one of the agent's requests: the RFD wants the request's session in
    ``Acp-Session-Id``; with ``correlate_by_id`` a response without it is taken by its JSON-RPC
    id alone (the id names a request this connection sent, so no other client's is reachable)."""
    request_id = message_id(message)
    route = connection.client_routes.get(request_id) if request_id is not None else None
    header = headers.get(HEADER_SESSION_ID)
    if route is not None and header != route:
        if header is not None:
            raise HttpError(
                400,
                f"Mismatched Acp-Session-Id: the request {request_id!r} this "
                f"responds to belongs to session {route!r}",
            )
        if not correlate_by_id:
            raise HttpError(
                400,
                f"Missing Acp-Session-Id: the request {request_id!r} this responds "
                f"to belongs to session {route!r}, and the RFD requires the header on "
                "every session-scoped POST, responses included (this server does not "
                "correlate responses by JSON-RPC id alone: "
                "acp_asgi_app(..., correlate_responses_by_id=True))",
            )
    if request_id is not None:
        connection.client_routes.pop(request_id, None)


async def _check_request(
    connection: RemoteConnection, headers: dict[str, str], message: dict[str, Any]
) -> None:
    method = message.get("method")
    header_session = headers.get(HEADER_SESSION_ID)
    params_session = params_session_id(message)
    if header_session is None and (method in SESSION_SCOPED_METHODS or params_session is not None):
        raise HttpError(400, "Missing Acp-Session-Id")
    if (
        header_session is not None
        and params_session is not None
        and header_session != params_session
    ):
        raise HttpError(400, "Mismatched Acp-Session-Id")
    session_id = header_session or params_session
    limit = connection.limits.max_id_length
    request_id = message_id(message)
    if (session_id is not None and len(session_id) > limit) or (
        isinstance(request_id, str) and len(request_id) > limit
    ):
        raise HttpError(400, "Id exceeds max_id_length")
    if session_id is not None and session_id not in connection.held:
        if method not in UNHELD_SESSION_METHODS or not connection.may_use(session_id):
            raise HttpError(404, "Unknown Acp-Session-Id")
        if method in ATTACH_METHODS and request_id is not None:
            connection.pending_attach[request_id] = session_id
    if request_id is not None and "id" in message:
        routed = None if method in CONNECTION_ROUTED_METHODS else session_id
        connection.pending_routes[request_id] = routed
        try:
            await connection.drain()  # a client that is not reading gets no more answers
        except ConnectionError:
            raise HttpError(404, "Unknown Acp-Connection-Id") from None


async def _get(app: RemoteApp, headers: dict[str, str], receive: Receive, send: Send) -> None:
    if EVENT_STREAM_MIME not in headers.get("accept", "").lower():
        raise HttpError(406, "Not Acceptable: GET must accept text/event-stream")
    connection = await _connection(app, headers)
    session_id = headers.get(HEADER_SESSION_ID)
    box: Mailbox
    if session_id is None:
        box = connection.connection_stream
    else:
        if len(session_id) > connection.limits.max_id_length:
            raise HttpError(400, "Acp-Session-Id exceeds max_id_length")
        if not connection.may_use(session_id):
            raise HttpError(404, "Unknown Acp-Session-Id")
        held = session_id in connection.held
        if not held and connection.unheld_streams >= connection.limits.max_buffered_session_streams:
            raise HttpError(429, "Too many session streams")
        try:
            box = connection.session_stream(session_id)
        except ConnectionError:
            raise HttpError(404, "Unknown Acp-Connection-Id") from None
        if not held and not box.has_receiver:
            connection.unheld_streams += 1
    if box.has_receiver:
        raise HttpError(409, "This stream already has a receiver")
    box.has_receiver = True
    try:
        await _stream(app, connection, box, receive, send)
    finally:
        connection.release_stream(session_id, box)


async def _stream(
    app: RemoteApp, connection: RemoteConnection, box: Mailbox, receive: Receive, send: Send
) -> None:
    stall = connection.limits.max_output_stall
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
    gone = asyncio.ensure_future(_disconnected(receive, box))
    try:
        while not gone.done():
            frames = await box.take(KEEPALIVE_SECONDS)
            if frames is None or gone.done():
                break
            chunk = (
                b"".join(b"data: " + frame.rstrip(b"\n") + b"\n\n" for frame in frames)
                if frames
                else b": keep-alive\n\n"
            )
            try:
                async with asyncio.timeout(stall):
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except TimeoutError:
                connection.close(f"output stalled for {stall} s")
                return
            if frames:
                connection.touch()
        with contextlib.suppress(OSError, RuntimeError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        gone.cancel()


async def _disconnected(receive: Receive, box: Mailbox) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    box.wake()
