"""Remote ACP: serve any agent handler over WebSocket and Streamable HTTP, and connect any client
handler to one by URL, with the same typed peers as over stdio (the ACP RFD "Streamable HTTP &
WebSocket Transport", at ``/acp``).

    serve_remote(MyAgent, "127.0.0.1", 8000)             # ws://127.0.0.1:8000/acp and http://...
    peer, connection = await connect_url("ws://127.0.0.1:8000/acp", MyClient())
    reader, writer = await open_url("http://127.0.0.1:8000/acp")  # for a connection of your own

The servers and clients (uvicorn, hypercorn, websockets, httpx: the ``remote`` extra)
are imported only when a function here is called; importing this package needs pydantic alone.

- ``server``: ``acp_asgi_app``, ``RemoteApp``, ``serve_remote``; ``serving``: ``serve_asgi``
  (uvicorn or hypercorn, hardened: socket timeouts, shutdown, open-file limit); ``ratelog``.
- ``http`` (with ``http_checks``), ``ws``: the two profiles; ``conn``: one client connection;
  ``registry``: the live connections; ``budget``: the server-wide memory budget; ``asgi``: origin
  checks, authentication, responses; ``pipes``: bounded byte pipes; ``stall``: the output-stall
  watch of a sending task (one timer per connection).
- ``client``, ``client_http``: ``connect_ws``, ``connect_http``, ``connect_url``, ``open_url``;
  ``client_read``: what the clients read, bounded by ``ClientLimits``.
- ``limits``: ``RemoteLimits`` (every bound and its default), header names, message sniffing.
"""

from __future__ import annotations

from .asgi import Authenticate, Refused
from .client import connect_http, connect_url, connect_ws, open_http, open_url, open_ws
from .client_http import RemoteHttpError
from .client_read import ClientLimitError
from .conn import StreamRunner
from .limits import ACP_PATH, DEFAULT_CLIENT_LIMITS, DEFAULT_LIMITS, ClientLimits, RemoteLimits
from .server import AgentSource, RemoteApp, acp_asgi_app, serve_asgi, serve_remote

__all__ = [
    "ACP_PATH",
    "DEFAULT_CLIENT_LIMITS",
    "DEFAULT_LIMITS",
    "AgentSource",
    "Authenticate",
    "ClientLimitError",
    "ClientLimits",
    "Refused",
    "RemoteApp",
    "RemoteHttpError",
    "RemoteLimits",
    "StreamRunner",
    "acp_asgi_app",
    "connect_http",
    "connect_url",
    "connect_ws",
    "open_http",
    "open_url",
    "open_ws",
    "serve_asgi",
    "serve_remote",
]
