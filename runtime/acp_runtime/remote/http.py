"""Remote ACP transport, server side: the Streamable HTTP profile (POST, GET as SSE, DELETE).

Owns the RFD's routing table for plain HTTP requests to ``/acp``: content negotiation (415,
406), the identity headers (400 missing, 404 unknown or not this client's; a client's response
without ``Acp-Session-Id`` is taken by its JSON-RPC id only when the app was made with
``correlate_responses_by_id=True``, off by default as the RFD requires the header), batches
(501), the request body limits (413; bodies are read only once the request is authenticated,
against the server's memory budget: 503 when it is spent, 408 past ``body_timeout``),
non-finite numbers (400), ids the runtime refuses (400, answered here), ``initialize``
answered 200 with its JSON body and ``Acp-Connection-Id`` (a refused one closes its connection:
the client may retry), everything else 202, and the long-lived SSE streams.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import pydantic_core

from ..jsonrpc import has_non_finite
from .asgi import Receive, Refused, Scope, Send, affinity_header, send_response
from .budget import refusal, refused_id
from .conn import RemoteConnection
from .http_checks import HttpError, check_client_response, check_request
from .limits import (
    EVENT_STREAM_MIME,
    HEADER_CONNECTION_ID,
    HEADER_SESSION_ID,
    INITIALIZE_METHOD,
    JSON_MIME,
    is_response,
    message_id,
)
from .pipes import Mailbox
from .stall import Keepalive, StallWatch

if TYPE_CHECKING:
    from .server import RemoteApp

KEEPALIVE_SECONDS = 15.0
SSE_BATCH_BYTES = 256 * 1024  # output taken off a mailbox per send: the rest stays counted


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
        if exc.answer is not None:
            body = pydantic_core.to_json(exc.answer)
            await send_response(send, exc.status, body, JSON_MIME, exc.headers)
        else:
            await send_response(send, exc.status, exc.message.encode(), headers=exc.headers)


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
    connection.client_came_back()
    return connection


async def _read_body(
    app: RemoteApp, headers: dict[str, str], receive: Receive, limit: int
) -> bytes:
    """The whole body: at most ``limit`` bytes (413), within ``body_timeout`` (408), each chunk
    reserved in the server's memory budget as it comes (503 when spent). The caller releases
    the body's reservation once done with it."""
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"Request body exceeds {limit} bytes")
    budget = app.registry.budget
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(app.limits.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise HttpError(400, "Client disconnected")
                chunk = message.get("body", b"")
                if size + len(chunk) > limit:
                    raise HttpError(413, f"Request body exceeds {limit} bytes")
                if not budget.try_take(len(chunk)):
                    raise HttpError(
                        503, "Server busy: memory budget spent", headers=[(b"retry-after", b"5")]
                    )
                size += len(chunk)
                parts.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(parts)
    except TimeoutError:
        budget.change(-size)
        raise HttpError(
            408, f"Request body not received within {app.limits.body_timeout} s"
        ) from None
    except BaseException:
        budget.change(-size)
        raise


async def _post(app: RemoteApp, headers: dict[str, str], receive: Receive, send: Send) -> None:
    content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != JSON_MIME:
        raise HttpError(415, "Unsupported Media Type: POST must be application/json")
    # Who it is comes first: nothing of the body is read for a client refused by its headers,
    # and a client without a connection may only send a small one (an initialize).
    connection: RemoteConnection | None = None
    principal: object = None
    if HEADER_CONNECTION_ID in headers:
        connection = await _connection(app, headers)
        limit = app.limits.max_request_body_bytes
    else:
        principal = await app.authenticate(headers)
        limit = min(app.limits.max_initialize_bytes, app.limits.max_request_body_bytes)
    body = await _read_body(app, headers, receive, limit)
    try:  # the body stays counted in the budget until the agent's input holds it
        await _post_body(app, headers, connection, principal, body, send)
    finally:
        app.registry.budget.change(-len(body))


async def _post_body(
    app: RemoteApp,
    headers: dict[str, str],
    connection: RemoteConnection | None,
    principal: object,
    body: bytes,
    send: Send,
) -> None:
    try:
        message: Any = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError:
        raise HttpError(400, "Invalid JSON") from None
    if has_non_finite(body, message):
        raise HttpError(400, "Invalid JSON: a number out of range (JSON has no infinity)")
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
    if not is_response(message) and refused_id(message, app.limits):
        # The runtime would answer with a null id, which no route leads back to: answer here.
        problem = "Invalid Request: id longer than 256 characters or out of 64-bit range"
        raise HttpError(400, problem, refusal(problem))
    if message.get("method") == INITIALIZE_METHOD:
        if connection is not None:
            raise HttpError(400, "initialize is not allowed on an existing connection")
        await _initialize(app, principal, body, message, send)
        return
    if connection is None:
        raise HttpError(400, "Missing Acp-Connection-Id")
    if is_response(message):
        check_client_response(connection, headers, message, app.correlate_responses_by_id)
    else:
        await check_request(connection, headers, message)
    del message  # a large body's parsed form is not kept while waiting for room
    frame = body.replace(b"\n", b" ") + b"\n"  # one line: JSON allows any whitespace there
    try:
        await connection.room_for_input()
        connection.inbound.feed(frame)
    except ConnectionError:
        raise HttpError(404, "Unknown Acp-Connection-Id") from None
    await send_response(send, 202)


async def _initialize(
    app: RemoteApp, principal: object, body: bytes, message: dict[str, Any], send: Send
) -> None:
    request_id = message_id(message)
    if request_id is None:
        raise HttpError(400, "initialize must be a request with an id")
    connection = app.open_connection_for(principal, "http")
    connection.initialize_id = request_id
    connection.initial = asyncio.get_running_loop().create_future()
    app.start_agent(connection)
    connection.inbound.feed(body.replace(b"\n", b" ") + b"\n")
    setup = app.limits.setup_timeout
    try:
        async with asyncio.timeout(setup):
            answer = await connection.initial
    except (ConnectionError, TimeoutError) as exc:
        # Every request gets an answer; the connection is gone, so a new initialize may follow.
        timed_out = isinstance(exc, TimeoutError)
        problem = (
            f"initialize not answered within setup_timeout ({setup} s)"
            if timed_out
            else "initialize failed: the agent closed the connection"
        )
        connection.close(problem)
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": problem}}
        raise HttpError(504 if timed_out else 500, problem, error) from None
    connection.initial = None
    if not connection.initialized:  # an error answer: nothing to keep, the client may retry
        connection.close("initialize refused by the agent")
        await send_response(send, 200, answer.rstrip(b"\n"), JSON_MIME)
        return
    response_headers = [
        (HEADER_CONNECTION_ID.encode(), connection.id.encode()),
        *affinity_header(app.affinity_cookie),
    ]
    await send_response(send, 200, answer.rstrip(b"\n"), JSON_MIME, response_headers)


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
    task = asyncio.current_task()
    assert task is not None
    watch = StallWatch(task, stall)  # one timer per stream, not one per chunk
    keepalive = Keepalive(box.wake, KEEPALIVE_SECONDS)  # nor one per wait: [] when it is due
    try:
        while not gone.done():
            frames = await box.take(None, SSE_BATCH_BYTES)
            if frames is None or gone.done():
                break
            chunk = (
                b"".join(b"data: " + frame.rstrip(b"\n") + b"\n\n" for frame in frames)
                if frames
                else b": keep-alive\n\n"
            )
            watch.begin()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            watch.end()
            keepalive.sent()
            if frames:
                connection.touch()
        with contextlib.suppress(OSError, RuntimeError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not watch.swallow():
            raise
        connection.close(f"output stalled for {stall} s")
    finally:
        keepalive.stop()
        watch.stop()
        gone.cancel()


async def _disconnected(receive: Receive, box: Mailbox) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    box.wake()
