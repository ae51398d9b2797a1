"""Remote ACP transport, server side: the WebSocket profile (GET with ``Upgrade: websocket``).

Owns one WebSocket's life: the checks before the upgrade (path, Origin, authentication,
connection limit), the upgrade with ``Acp-Connection-Id`` (and the affinity cookie) in its
response headers, text frames in (binary ignored, the first must be ``initialize``; one the
agent refuses, or whose id the runtime refuses, may be followed by another), the agent's output
out through one pump that cuts off a client which stops reading, and the cleanup of the
connection and its sessions on disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import pydantic_core

from .asgi import Message, Receive, Refused, Scope, Send, affinity_header
from .budget import refusal, refused_id
from .conn import RemoteConnection
from .limits import (
    ATTACH_METHODS,
    HEADER_CONNECTION_ID,
    INITIALIZE_METHOD,
    UNHELD_SESSION_METHODS,
    is_response,
    message_id,
    params_session_id,
    parse_message,
)
from .stall import StallWatch
from .uvicorn_ws import SEND_MANY

if TYPE_CHECKING:
    from .server import RemoteApp

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote

CLOSE_NORMAL = 1000
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_LIMIT = 1013
GO_ON = 0  # not a close code: the next event
PUMP_BATCH_BYTES = 256 * 1024  # output taken off the mailbox per batch: the rest stays counted


async def handle_websocket(app: RemoteApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve one WebSocket connection to the endpoint."""
    if (await receive())["type"] != "websocket.connect":
        return
    headers = app.checked_headers(scope)
    try:
        if not app.origin_ok(headers):
            raise Refused(403, "Forbidden: Origin not allowed")
        connection = await app.open_connection("ws", headers)
    except Refused as exc:
        await _deny(scope, send, exc.status, exc.message)
        return
    del headers  # not kept for the connection's life (0.6 KiB)
    accept = {
        "type": "websocket.accept",
        "headers": [
            (HEADER_CONNECTION_ID.encode(), connection.id.encode()),
            *affinity_header(app.affinity_cookie),
        ],
    }
    await send(accept)
    del accept
    app.start_agent(connection)
    # The client's frames are read in this task and the output pumped in one other: a third
    # task to read, and a wait on both, cost 2.5 KiB per connection. When the pump ends (the
    # connection closed, or its client stalled) it cancels the read, stuck in `receive`.
    this = asyncio.current_task()
    assert this is not None
    reading = True
    many = SEND_MANY in scope.get("extensions", {})
    pump = asyncio.ensure_future(_pump(connection, send, many))
    pump.add_done_callback(lambda _: this.cancel() if reading else None)
    code: int | None
    try:
        code = await _read(app, connection, receive)
    except asyncio.CancelledError:
        # Ours alone (the pump ended, nobody else cancelled): take it back and close below.
        if not (pump.done() and this.cancelling() == 1):
            raise
        this.uncancel()
        code = CLOSE_NORMAL if connection.close_reason == "agent finished" else CLOSE_LIMIT
    finally:
        reading = False
        connection.close("WebSocket closed")
        await asyncio.wait([pump])
    if code is not None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            async with asyncio.timeout(1.0):
                await send({"type": "websocket.close", "code": code})


async def _deny(scope: Scope, send: Send, status: int, message: str) -> None:
    # With the ASGI "websocket.http.response" extension the client sees the real status; without
    # it, closing before the accept is a 403.
    if "websocket.http.response" in scope.get("extensions", {}):
        body = message.encode()
        start = {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
        await send(start)
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": CLOSE_POLICY})


async def _read(app: RemoteApp, connection: RemoteConnection, receive: Receive) -> int | None:
    """Feed the client's text frames to the agent; the close code to answer with (None: gone)."""
    while not connection.closed:
        # Each event is handled in a call of its own: while this waits for the next one, the
        # last one's locals (event, text, bytes, parsed message: 1 KiB) are not kept.
        code = await _event(app, connection, await receive())
        if code != GO_ON:
            return code
    return CLOSE_LIMIT


async def _event(app: RemoteApp, connection: RemoteConnection, event: Message) -> int | None:
    """Handle one ASGI event: ``GO_ON``, or the close code to answer with (None: gone)."""
    kind = event["type"]
    if kind == "websocket.disconnect":
        return None
    if kind != "websocket.receive":
        return GO_ON
    text = event.get("text")
    if text is None:
        return GO_ON  # binary frames are ignored (the RFD)
    data = text.encode()
    if len(data) > app.limits.max_request_body_bytes:
        return CLOSE_TOO_BIG
    connection.touch()
    message = parse_message(data)
    if message is not None and refused_id(message, connection.limits):
        if not is_response(message):  # the runtime's answer would name no id: answer here
            problem = "Invalid Request: id longer than 256 characters or out of 64-bit range"
            connection.connection_stream.push(pydantic_core.to_json(refusal(problem)) + b"\n")
        return GO_ON
    if (
        message is not None
        and message.get("method") == INITIALIZE_METHOD
        and message_id(message) is not None
        and not connection.initialized
    ):
        connection.initialize_id = message_id(message)  # until one succeeds, others may follow
    elif connection.initialize_id is None:
        logger.warning("first ACP WebSocket message must be an initialize request")
        return CLOSE_PROTOCOL_ERROR
    elif message is not None and not _admit(connection, message):
        return GO_ON
    else:
        connection.client_came_back()
    try:
        if message is not None and not is_response(message) and "id" in message:
            await connection.drain()  # a client that is not reading gets no more answers
        await connection.room_for_input()
        connection.inbound.feed(data.replace(b"\n", b" ") + b"\n")
    except ConnectionError:
        return CLOSE_LIMIT
    return GO_ON


def _text(frame: bytes) -> bytes:
    """A frame's payload without its newline, checked as UTF-8 (a text frame's)."""
    if not frame.isascii():
        frame.decode()  # UnicodeDecodeError, as before the batch: nothing invalid is sent
    # A copy, not a memoryview: those are tracked by the garbage collector, whose collections
    # they trigger cost more, with thousands of connections' objects alive, than copying.
    return frame[:-1] if frame.endswith(b"\n") else frame


def _admit(connection: RemoteConnection, message: dict[str, Any]) -> bool:
    """Refuse a second initialize and sessions this connection may not use (answered here)."""
    method = message.get("method")
    request_id = message_id(message)
    problem = None
    session_id = params_session_id(message)
    if method == INITIALIZE_METHOD:
        problem = "initialize is not allowed on an existing connection"
    elif session_id is not None and session_id not in connection.held:
        if len(session_id) > connection.limits.max_id_length:
            problem = "sessionId exceeds max_id_length"
        elif method not in UNHELD_SESSION_METHODS or not connection.may_use(session_id):
            problem = "Unknown session for this connection"
        elif method in ATTACH_METHODS and request_id is not None:
            connection.pending_attach[request_id] = session_id
    if problem is None:
        return True
    if "id" in message and not is_response(message):
        error = {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": -32600,
                "message": f"Invalid Request: {problem}",
                "data": {"sessionId": session_id},
            },
        }
        connection.connection_stream.push(pydantic_core.to_json(error) + b"\n")
    return False


async def _pump(connection: RemoteConnection, send: Send, many: bool) -> None:
    """Send the agent's output; a client that takes none of it for the stall limit is cut off.

    ``many``: the server takes a batch of frames in one send (``uvicorn_ws.SEND_MANY``, as
    ``serve_remote``'s does), else one ``websocket.send`` per frame."""
    stall = connection.limits.max_output_stall
    box = connection.connection_stream
    box.has_receiver = True
    task = asyncio.current_task()
    assert task is not None
    watch = StallWatch(task, stall)  # one timer per connection, not one per frame
    try:
        while True:
            frames = await box.take(None, PUMP_BATCH_BYTES)
            if frames is None:
                return
            watch.begin()
            if many:
                await send({"type": SEND_MANY, "texts": [_text(frame) for frame in frames]})
            else:
                for frame in frames:
                    text = frame[:-1] if frame.endswith(b"\n") else frame
                    await send({"type": "websocket.send", "text": text.decode()})
                    watch.sent()
            watch.end()
    except asyncio.CancelledError:
        if not watch.swallow():
            raise
        connection.close(f"output stalled for {stall} s")
    except (OSError, RuntimeError):
        connection.close("WebSocket send failed")
    finally:
        watch.stop()
