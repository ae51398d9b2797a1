"""pypi_agent.py's echo agent served remotely by the PyPI `agent-client-protocol` SDK itself: its
Starlette app (`acp.http.asgi.create_asgi_app`: Streamable HTTP and WebSocket at /acp, one agent
per connection) under uvicorn, on 127.0.0.1.

usage: python pypi_remote_agent.py PORT

Needs the SDK's `http` extra and uvicorn (tests/interop/peers/pypi-acp-1.0-remote.txt). Runs until
terminated.
"""

from __future__ import annotations

import sys

import uvicorn
from acp.http.asgi import create_asgi_app
from pypi_agent import EchoAgent  # this script's directory is on sys.path


def main() -> None:
    port = int(sys.argv[1])
    app = create_asgi_app(lambda _connection: EchoAgent())
    # the SDK's own choice of server is left to the user; uvicorn is the usual one (HTTP/1.1)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
