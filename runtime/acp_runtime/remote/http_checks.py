"""Remote ACP transport, server side: the checks of a Streamable HTTP POST on a connection.

Owns ``HttpError`` (a request answered with a status) and what the RFD requires of a POST on an
existing connection before it reaches the agent: a client's response carries the
``Acp-Session-Id`` of the request it answers (or, with ``correlate_responses_by_id``, is taken by
its id), a request names a session it holds or may attach, ids within ``max_id_length``, and the
route its answer will take.
"""

from __future__ import annotations

from typing import Any

from .conn import RemoteConnection
from .limits import (
    ATTACH_METHODS,
    CONNECTION_ROUTED_METHODS,
    HEADER_SESSION_ID,
    SESSION_SCOPED_METHODS,
    UNHELD_SESSION_METHODS,
    message_id,
    params_session_id,
)


class HttpError(Exception):
    """Answer the request with ``status`` and a one-line text body (or a JSON-RPC ``answer``)."""

    def __init__(
        self,
        status: int,
        message: str,
        answer: dict[str, Any] | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.answer = answer
        self.headers = headers or []


def check_client_response(
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


async def check_request(
    connection: RemoteConnection, headers: dict[str, str], message: dict[str, Any]
) -> None:
    """A client's request or notification: its session headers and ids, the session it names
    (held, or one it may attach), and its route back; waits while the client reads no answers."""
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
