"""Remote ACP transport, server side: the ASGI application and ``serve_remote``.

Owns ``acp_asgi_app`` (one ``/acp`` endpoint per the RFD "Streamable HTTP & WebSocket
Transport": Streamable HTTP in ``remote.http``, WebSocket in ``remote.ws``, connection state in
``remote.conn``) and ``serve_remote``, which runs it under uvicorn (HTTP/1.1 and WebSocket) or
hypercorn (``http2=True``) through ``remote.serving``. The servers are imported only when
called: a generated package depends on pydantic alone (install the ``remote`` extra for the
rest).

The agent of each connection is an ``AgentHandler`` of any generated package (driven by a
``Connection`` over its method table, its ``peer`` attached) or a ``StreamRunner``: an async
callable taking ``(reader, writer)`` that runs the connection itself (a version router's
``serve``).
"""

from __future__ import annotations

import copy
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..peers import AgentHandler, PeerBase
from .asgi import (
    Authenticate,
    Receive,
    Refused,
    Scope,
    Send,
    authenticate_request,
    normalise_origins,
    origin_allowed,
    request_headers,
    send_response,
)
from .conn import RemoteConnection, StreamRunner, Transport
from .http import handle_http
from .limits import ACP_PATH, DEFAULT_LIMITS, RemoteLimits
from .registry import LimitExceeded, Registry
from .serving import serve_asgi
from .ws import handle_websocket

__all__ = [
    "ACP_PATH",
    "AgentSource",
    "Refused",
    "RemoteApp",
    "RemoteLimits",
    "StreamRunner",
    "acp_asgi_app",
    "serve_asgi",
    "serve_remote",
]

AgentFactory = Callable[[], "AgentHandler[PeerBase] | StreamRunner"]
"""Called once per connection: its agent handler, or a ``StreamRunner``."""

AgentSource = AgentHandler[PeerBase] | AgentFactory
"""An agent handler (shallow-copied per connection: each copy has its own ``peer``, the
attributes it shares, such as a session store, stay shared), or an ``AgentFactory`` (such as the
handler's class, or ``lambda: router.serve`` for a ``VersionRouter``)."""


def agent_factory(agent: AgentSource) -> AgentFactory:
    """The per-connection factory of an ``AgentSource``."""
    if isinstance(agent, AgentHandler):
        return lambda: copy.copy(agent)
    return agent


logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote

AFFINITY_COOKIE = "acp_affinity"


class RemoteApp:
    """The ASGI application serving ACP at one path (call it as ``app(scope, receive, send)``)."""

    def __init__(
        self,
        agent_factory: AgentFactory,
        *,
        limits: RemoteLimits = DEFAULT_LIMITS,
        allowed_origins: Iterable[str] = (),
        authenticate: Authenticate | None = None,
        path: str = ACP_PATH,
        affinity_cookie: tuple[str, str] | None = None,
        correlate_responses_by_id: bool = False,
    ) -> None:
        self.agent_factory = agent_factory
        self.correlate_responses_by_id = correlate_responses_by_id
        self.limits = limits
        self.allowed_origins = normalise_origins(allowed_origins)
        self._authenticate = authenticate
        self.path = path
        self.affinity_cookie = affinity_cookie
        self.registry = Registry(limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope.get("path") != self.path:
            if kind == "http":
                await send_response(send, 404, b"Not Found")
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if kind == "http":
            await handle_http(self, scope, receive, send)
        elif kind == "websocket":
            await handle_websocket(self, scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def close(self, timeout: float | None = None) -> None:
        """Close every connection: their streams end, their agents get ``timeout`` (by default
        ``limits.shutdown_timeout``) to stop, then are cancelled."""
        await self.registry.close_all(self.limits.shutdown_timeout if timeout is None else timeout)

    # ------------------------------------------------------------------ used by the handlers

    def checked_headers(self, scope: Scope) -> dict[str, str]:
        """The request headers by lower-case name."""
        return request_headers(scope)

    def origin_ok(self, headers: Mapping[str, str]) -> bool:
        """Whether the request's Origin header (if any) is allowed."""
        return origin_allowed(headers, self.allowed_origins)

    async def authenticate(self, headers: Mapping[str, str]) -> object:
        """The principal of a request, or ``Refused``."""
        return await authenticate_request(self._authenticate, headers)

    async def open_connection(
        self, transport: Transport, headers: Mapping[str, str]
    ) -> RemoteConnection:
        """A new connection for an authenticated client (``Refused``: 401/403, 503 when full)."""
        return self.open_connection_for(await self.authenticate(headers), transport)

    def open_connection_for(self, principal: object, transport: Transport) -> RemoteConnection:
        """A new connection for an authenticated principal (``Refused``: 503 when full)."""
        try:
            return self.registry.create(transport, principal)
        except LimitExceeded:
            raise Refused(503, "Too many connections") from None

    def start_agent(self, connection: RemoteConnection) -> None:
        """Make this connection's agent and start it."""
        connection.start(self.agent_factory())


def acp_asgi_app(
    agent: AgentSource,
    *,
    limits: RemoteLimits = DEFAULT_LIMITS,
    allowed_origins: Iterable[str] = (),
    authenticate: Authenticate | None = None,
    path: str = ACP_PATH,
    affinity_cookie: tuple[str, str] | None | bool = True,
    correlate_responses_by_id: bool = False,
) -> RemoteApp:
    """An ASGI app serving ACP over Streamable HTTP and WebSocket at ``path``.

    ``agent`` serves each connection (see ``AgentSource``). ``allowed_origins``
    lists the browser origins allowed (any request with another ``Origin`` gets 403; "*" allows
    all). ``authenticate`` sees each request's headers before anything is accepted.
    ``affinity_cookie``: True sets ``acp_affinity=<random worker id>`` for sticky load
    balancing, a (name, value) pair sets that cookie, None or False sets none.
    ``correlate_responses_by_id``: accept a client's response POST without ``Acp-Session-Id``
    (clients that omit it, as the PyPI SDK's 1.0.0rc3 does) by its JSON-RPC id; off by default,
    as the RFD requires the header (such a POST is then answered 400, saying so).
    """
    cookie: tuple[str, str] | None
    if affinity_cookie is True:
        cookie = (AFFINITY_COOKIE, secrets.token_hex(8))
    elif affinity_cookie is False or affinity_cookie is None:
        cookie = None
    else:
        cookie = affinity_cookie
    return RemoteApp(
        agent_factory(agent),
        limits=limits,
        allowed_origins=allowed_origins,
        authenticate=authenticate,
        path=path,
        affinity_cookie=cookie,
        correlate_responses_by_id=correlate_responses_by_id,
    )


def serve_remote(
    agent: AgentSource,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    http2: bool = False,
    certfile: str | None = None,
    keyfile: str | None = None,
    log_level: str = "info",
    loop: str = "auto",
    ws_deflate: bool = False,
    **app_options: Any,
) -> None:
    """Serve ``agent`` on ``host:port`` until SIGTERM or SIGINT (uvicorn; hypercorn when
    ``http2``), then exit within ``limits.shutdown_timeout``.

    ``app_options`` are those of ``acp_asgi_app`` (``limits``, ``allowed_origins``,
    ``authenticate``, ...); ``serve_asgi`` runs an app made already. Silent and slow sockets are
    closed, the soft open-file limit is raised to the hard one and peer-caused log lines are
    rate-limited (docs/remote.md, "Running on the internet"). ``loop``: "asyncio", "uvloop" (the
    ``remote-fast`` extra) or "auto", uvloop when installed (docs/remote.md, "Measuring").
    WebSocket frames of one loop turn leave in one write (``remote.uvicorn_ws``); ``ws_deflate``:
    accept permessage-deflate (off: 40 KiB per connection; see ``serve_asgi``).
    """
    serve_asgi(
        acp_asgi_app(agent, **app_options),
        host,
        port,
        http2=http2,
        certfile=certfile,
        keyfile=keyfile,
        log_level=log_level,
        loop=loop,
        ws_deflate=ws_deflate,
    )
