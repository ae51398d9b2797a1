"""Remote ACP transport, server side: ASGI plumbing shared by the HTTP and WebSocket handlers.

Owns the ASGI type aliases, the request headers as a mapping, the Origin check against DNS
rebinding, the authentication hook's contract, the affinity cookie and plain responses.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any, TypeAlias

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
ASGIApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

Authenticate: TypeAlias = Callable[[Mapping[str, str]], Awaitable[object] | object]
"""Sees a request's headers (lower-case names); returns who it is, or None/False to refuse
(401). It may raise ``Refused`` for another status. A connection is bound to the value returned
when it was opened: a request from anyone else gets 404, as for an unknown connection."""

ANONYMOUS = ("anonymous",)


class Refused(Exception):
    """Raised by an ``Authenticate`` hook to answer with ``status`` (e.g. 403)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (repeated headers joined with ", ")."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def normalise_origins(origins: Iterable[str]) -> frozenset[str]:
    """Allowed origins as ``scheme://host[:port]``, lower-case ("*" allows every origin)."""
    return frozenset(origin.rstrip("/").lower() for origin in origins)


def origin_allowed(headers: Mapping[str, str], allowed: frozenset[str]) -> bool:
    """Whether the request's Origin (if any) is allowed.

    Browsers send Origin; other clients do not. A page on a rebinding domain that resolves to
    this server has a foreign Origin even though its Host header matches, so Host is not used.
    """
    origin = headers.get("origin")
    if origin is None or "*" in allowed:
        return True
    return origin.rstrip("/").lower() in allowed


async def authenticate_request(hook: Authenticate | None, headers: Mapping[str, str]) -> object:
    """Run the hook: the principal, or ``Refused`` (401 when the hook said no)."""
    if hook is None:
        return ANONYMOUS
    principal = hook(headers)
    if inspect.isawaitable(principal):
        principal = await principal
    if principal is None or principal is False:
        raise Refused(401, "Unauthorized")
    return principal


def affinity_header(cookie: tuple[str, str] | None) -> list[tuple[bytes, bytes]]:
    """The Set-Cookie header that lets a load balancer keep a client on this worker."""
    if cookie is None:
        return []
    name, value = cookie
    text = f"{name}={value}; Path=/; HttpOnly; SameSite=Lax"
    return [(b"set-cookie", text.encode("latin-1"))]


async def send_response(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: str = "text/plain; charset=utf-8",
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Send a whole response."""
    all_headers = [*headers, (b"cache-control", b"no-store")]
    if body or status not in (202, 204):
        all_headers.append((b"content-type", content_type.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})
