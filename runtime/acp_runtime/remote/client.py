"""Remote ACP transport, client side: ``connect_ws``, ``connect_http`` and ``connect_url``.

Each connects a client handler of any generated package and returns its typed peer and the
``Connection`` over queue-backed pipes, which work exactly as stdio does; ``open_ws``,
``open_http`` and ``open_url`` return those pipes themselves (a reader and a writer, for a caller
that builds its own connection, such as a negotiating client). WebSocket (``websockets``): one
text frame per message, the connection id from the upgrade response, a close frame on
``close()``. Streamable HTTP (``httpx``, event streams parsed by ``client_read``): POST per
message in order, the connection-scoped SSE stream after ``initialize``, one session-scoped stream
per session (opened before the first message of that session is posted), DELETE on ``close()``.
The cookie jar lives as long as the connection (pass one to keep affinity across reconnects). An
HTTP failure is a ``RemoteHttpError`` (WebSocket upgrade) or the failed request's JSON-RPC error
carrying it (``data``: status and body). What the agent can make the client hold is bounded by
``client_limits`` (``ClientLimits``: message and error body sizes, SSE lines, session streams).
Those libraries are imported only when called (the ``remote`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl as _ssl
import urllib.request
from collections.abc import Mapping
from email.message import Message
from http.cookiejar import CookieJar
from typing import Any, TypeVar

from ..jsonrpc import Connection
from ..peers import ClientHandler, PeerBase
from .client_http import HttpSink, RemoteHttpError
from .limits import (
    DEFAULT_CLIENT_LIMITS,
    DEFAULT_LIMITS,
    HEADER_CONNECTION_ID,
    ClientLimits,
    RemoteLimits,
)
from .pipes import ByteBound, InboundPipe, QueuedSink

__all__ = [
    "RemoteHttpError",
    "connect_http",
    "connect_url",
    "connect_ws",
    "open_http",
    "open_url",
    "open_ws",
]

P = TypeVar("P", bound=PeerBase)

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote


class WsSink(QueuedSink):
    """The ``WriterLike`` of a WebSocket connection: frames sent in order by one task."""

    def __init__(self, ws: Any, limits: RemoteLimits, reader: asyncio.Task[None]) -> None:
        self._ws = ws
        self._reader = reader
        super().__init__(ByteBound(limits.max_buffered_bytes, limits.max_output_stall))

    async def wait_closed(self) -> None:
        """Wait for the close handshake."""
        await asyncio.wait([self._sender])
        with contextlib.suppress(Exception):
            await self._ws.close()
        self._reader.cancel()
        await asyncio.wait([self._reader])

    async def _send_all(self) -> None:
        from websockets.exceptions import WebSocketException

        try:
            while (data := await self._next()) is not None:
                for line in data.splitlines():
                    await self._ws.send(line.decode())
        except (WebSocketException, OSError) as exc:  # the socket went away: reads see EOF
            logger.debug("WebSocket send failed: %s", exc)


async def _ws_read(ws: Any, pipe: InboundPipe, bound: ByteBound) -> None:
    from websockets.exceptions import WebSocketException

    try:
        async for message in ws:
            if isinstance(message, str):  # binary frames are ignored
                pipe.feed(message.encode().replace(b"\n", b" ") + b"\n")
                await bound.wait(lambda: pipe.buffered)
    except (WebSocketException, OSError) as exc:  # ConnectionError: the peer stopped reading
        logger.debug("WebSocket read ended: %s", exc)
    finally:
        pipe.feed_eof()


def _inbound(limits: RemoteLimits) -> tuple[ByteBound, InboundPipe]:
    bound = ByteBound(limits.max_buffered_bytes, limits.max_output_stall)
    return bound, InboundPipe(bound.progress)


def _http_url(url: str) -> str:
    return "http" + url[2:] if url.startswith("ws") else url


def _cookie_header(jar: CookieJar, url: str) -> str | None:
    request = urllib.request.Request(_http_url(url))
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


class _UpgradeResponse:
    """What ``CookieJar.extract_cookies`` needs of a response."""

    def __init__(self, headers: Any) -> None:
        self._message = Message()
        for name, value in headers.raw_items():
            self._message[name] = value

    def info(self) -> Message:
        return self._message


async def open_ws(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: CookieJar | None = None,
    limits: RemoteLimits = DEFAULT_LIMITS,
    open_timeout: float = 10.0,
    ssl: _ssl.SSLContext | None = None,
    client_limits: ClientLimits = DEFAULT_CLIENT_LIMITS,
) -> tuple[InboundPipe, WsSink]:
    """Open a WebSocket to an ACP endpoint (``ws://`` or ``wss://``): its reader and writer.

    ``ssl`` is the context that verifies a ``wss://`` server (default: the system's CAs).
    """
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    jar = cookies if cookies is not None else CookieJar()
    extra = dict(headers or {})
    cookie = _cookie_header(jar, url)
    if cookie:
        extra["Cookie"] = cookie
    tls: dict[str, Any] = {"ssl": ssl} if ssl is not None else {}  # None would mean no TLS
    try:
        ws = await connect(
            url,
            additional_headers=extra,
            max_size=client_limits.max_message_bytes,
            open_timeout=open_timeout,
            compression=None,
            **tls,
        )
    except InvalidStatus as exc:
        response = exc.response
        raise RemoteHttpError(
            "GET (upgrade)", url, response.status_code, bytes(response.body or b"")
        ) from None
    upgrade = ws.response
    if upgrade is None:  # pragma: no cover - connect() returns only after the handshake
        raise ConnectionError(f"GET (upgrade) {url}: no handshake response")
    request = urllib.request.Request(_http_url(url))
    jar.extract_cookies(_UpgradeResponse(upgrade.headers), request)  # type: ignore[arg-type]
    bound, pipe = _inbound(limits)
    sink = WsSink(ws, limits, asyncio.ensure_future(_ws_read(ws, pipe, bound)))
    sink.connection_id = upgrade.headers.get(HEADER_CONNECTION_ID)
    return pipe, sink


async def connect_ws(
    url: str, client: ClientHandler[P], *, limits: RemoteLimits = DEFAULT_LIMITS, **options: Any
) -> tuple[P, Connection]:
    """Connect ``client`` to the agent at a ``ws://`` or ``wss://`` URL: its typed peer and the
    connection (not running yet: ``run()`` it or use ``async with``). ``options``: those of
    ``open_ws``."""
    return _connection(client, await open_ws(url, limits=limits, **options), limits)


async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: CookieJar | None = None,
    limits: RemoteLimits = DEFAULT_LIMITS,
    http2: bool = False,
    ssl: _ssl.SSLContext | None = None,
    client_limits: ClientLimits = DEFAULT_CLIENT_LIMITS,
) -> tuple[InboundPipe, HttpSink]:
    """A reader and a writer for an ACP endpoint over Streamable HTTP (``http://``, ``https://``).

    Nothing is sent until the first message, which must be ``initialize``. ``http2=True`` needs
    the ``h2`` package (the RFD requires HTTP/2 for this profile; HTTP/1.1 works with one TCP
    connection per open stream). ``ssl`` is the context that verifies an ``https://`` server
    (default: the system's CAs).
    """
    import httpx

    jar = cookies if cookies is not None else CookieJar()
    client = httpx.AsyncClient(
        cookies=jar,
        headers=dict(headers or {}),
        http2=http2,
        verify=ssl if ssl is not None else True,
        http1=not (http2 and url.lower().startswith("http:")),  # h2c needs prior knowledge
        timeout=httpx.Timeout(client_limits.request_timeout),  # streams: their own read timeout
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=16),
    )
    bound, pipe = _inbound(limits)
    sink = HttpSink(client, url, pipe, bound, limits, client_limits)
    return pipe, sink


async def connect_http(
    url: str, client: ClientHandler[P], *, limits: RemoteLimits = DEFAULT_LIMITS, **options: Any
) -> tuple[P, Connection]:
    """Connect ``client`` to the agent at an ``http://`` or ``https://`` URL (Streamable HTTP):
    its typed peer and the connection. Nothing is sent until the first message, which must be
    ``initialize``. ``options``: those of ``open_http``.
    """
    return _connection(client, await open_http(url, limits=limits, **options), limits)


async def open_url(url: str, **options: Any) -> tuple[InboundPipe, QueuedSink]:
    """``open_ws`` for ``ws://``/``wss://`` URLs, ``open_http`` for ``http://``/``https://``."""
    scheme = url.partition(":")[0].lower()
    if scheme in ("ws", "wss"):
        return await open_ws(url, **options)
    if scheme in ("http", "https"):
        return await open_http(url, **options)
    raise ValueError(f"not an ACP endpoint URL (ws, wss, http or https): {url!r}")


async def connect_url(
    url: str, client: ClientHandler[P], *, limits: RemoteLimits = DEFAULT_LIMITS, **options: Any
) -> tuple[P, Connection]:
    """``connect_ws`` for ``ws://``/``wss://`` URLs, ``connect_http`` for ``http://``/``https://``."""
    return _connection(client, await open_url(url, limits=limits, **options), limits)


def _connection(
    client: ClientHandler[P], opened: tuple[InboundPipe, QueuedSink], limits: RemoteLimits
) -> tuple[P, Connection]:
    pipe, sink = opened
    connection = Connection(
        client, client.inbound_methods, pipe, sink, max_line_bytes=limits.max_request_body_bytes
    )
    return client.attach(connection), connection
