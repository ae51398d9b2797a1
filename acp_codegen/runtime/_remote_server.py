"""Remote ACP transport, server side: the ASGI application and ``serve_remote``.

Owns ``acp_asgi_app`` (one ``/acp`` endpoint per the RFD "Streamable HTTP & WebSocket
Transport": Streamable HTTP in ``_remote_http``, WebSocket in ``_remote_ws``, connection state in
``_remote_conn``) and ``serve_remote``, which runs it under uvicorn (HTTP/1.1 and WebSocket) or
hypercorn (``http2=True``). The servers are imported only when called: a generated package
depends on pydantic alone (install the ``remote`` extra for the rest).

An agent factory is called once per connection and returns either a handler object (driven by
a ``Connection`` over the package's inbound method table, its ``peer`` set by ``peer_factory``)
or a ``StreamRunner``: an async callable taking ``(reader, writer)`` that runs the connection
itself (the hook for a version router).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping

from ._remote_asgi import (
    ASGIApp,
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
from ._remote_conn import (
    LimitExceeded,
    PeerFactory,
    Registry,
    RemoteConnection,
    StreamRunner,
    Transport,
)
from ._remote_http import handle_http
from ._remote_limits import ACP_PATH, DEFAULT_LIMITS, RemoteLimits
from ._remote_ws import handle_websocket
from ._rpc import MethodSpec

__all__ = [
    "ACP_PATH",
    "Refused",
    "RemoteApp",
    "RemoteLimits",
    "StreamRunner",
    "acp_asgi_app",
    "serve_remote",
]

logger = logging.getLogger(__name__.rpartition(".")[0] + "._remote")

AFFINITY_COOKIE = "acp_affinity"


class RemoteApp:
    """The ASGI application serving ACP at one path (call it as ``app(scope, receive, send)``)."""

    def __init__(
        self,
        agent_factory: Callable[[], object],
        inbound: Mapping[str, MethodSpec],
        *,
        peer_factory: PeerFactory | None = None,
        limits: RemoteLimits = DEFAULT_LIMITS,
        allowed_origins: Iterable[str] = (),
        authenticate: Authenticate | None = None,
        path: str = ACP_PATH,
        affinity_cookie: tuple[str, str] | None = None,
    ) -> None:
        self.agent_factory = agent_factory
        self.inbound = inbound
        self.peer_factory = peer_factory
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

    async def close(self) -> None:
        """Close every connection (their agents stop, their streams end)."""
        await self.registry.close_all()

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
        principal = await self.authenticate(headers)
        try:
            return self.registry.create(transport, principal)
        except LimitExceeded:
            raise Refused(503, "Too many connections") from None

    def start_agent(self, connection: RemoteConnection) -> None:
        """Make this connection's agent and start it."""
        connection.start(self.agent_factory(), self.inbound, self.peer_factory)


def acp_asgi_app(
    agent_factory: Callable[[], object],
    inbound: Mapping[str, MethodSpec],
    *,
    peer_factory: PeerFactory | None = None,
    limits: RemoteLimits = DEFAULT_LIMITS,
    allowed_origins: Iterable[str] = (),
    authenticate: Authenticate | None = None,
    path: str = ACP_PATH,
    affinity_cookie: tuple[str, str] | None | bool = True,
) -> RemoteApp:
    """An ASGI app serving ACP over Streamable HTTP and WebSocket at ``path``.

    ``agent_factory`` runs once per connection (see the module docstring). ``allowed_origins``
    lists the browser origins allowed (any request with another ``Origin`` gets 403; "*" allows
    all). ``authenticate`` sees each request's headers before anything is accepted.
    ``affinity_cookie``: True sets ``acp_affinity=<random worker id>`` for sticky load
    balancing, a (name, value) pair sets that cookie, None or False sets none.
    """
    cookie: tuple[str, str] | None
    if affinity_cookie is True:
        cookie = (AFFINITY_COOKIE, secrets.token_hex(8))
    elif affinity_cookie is False or affinity_cookie is None:
        cookie = None
    else:
        cookie = affinity_cookie
    return RemoteApp(
        agent_factory,
        inbound,
        peer_factory=peer_factory,
        limits=limits,
        allowed_origins=allowed_origins,
        authenticate=authenticate,
        path=path,
        affinity_cookie=cookie,
    )


def serve_remote(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    http2: bool = False,
    certfile: str | None = None,
    keyfile: str | None = None,
    log_level: str = "info",
) -> None:
    """Serve ``app`` until interrupted: uvicorn, or hypercorn for HTTP/2 (needs the ``remote`` extra).

    Without TLS hypercorn speaks HTTP/2 with prior knowledge (h2c) besides HTTP/1.1; with
    ``certfile``/``keyfile`` it negotiates h2 by ALPN, as browsers and most clients require.
    """
    if http2:
        asyncio.run(_serve_hypercorn(app, host, port, certfile, keyfile, log_level))
        return
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("serve_remote needs uvicorn: install the `remote` extra") from exc
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
        ws="websockets-sansio",
        lifespan="on",
    )


async def _serve_hypercorn(
    app: ASGIApp, host: str, port: int, certfile: str | None, keyfile: str | None, log_level: str
) -> None:
    try:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "serve_remote(http2=True) needs hypercorn: install the `remote` extra"
        ) from exc
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.loglevel = log_level.upper()
    if certfile is not None:
        config.certfile = certfile
        config.keyfile = keyfile
    await serve(app, config)  # type: ignore[arg-type]
