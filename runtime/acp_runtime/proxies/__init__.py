"""Proxy chains (the "Agent Extensions via ACP Proxies" RFD): proxies, the conductor, the CLI.

- `Proxy` and `serve_proxy`: write a proxy; by default it forwards every message unchanged, raw
  (`proxy`).
- `Conductor` and `acp-conductor`: spawn a chain of proxies in front of an agent and route
  `proxy/successor` between them, looking like one agent to the client (`conductor`, `cli`).
- `wrap` / `unwrap`: the `proxy/successor` envelope (`envelope`).

Depends on the JSON-RPC runtime and the peers only; a generated package (`package=`) types a
proxy's hooks and peers.
"""

from __future__ import annotations

from .conductor import ChainEnd, Conductor
from .envelope import INITIALIZE, PROXY_INITIALIZE, PROXY_SUCCESSOR, unwrap, wrap
from .proxy import Direction, Proxy, SuccessorLink, serve_proxy

__all__ = [
    "INITIALIZE",
    "PROXY_INITIALIZE",
    "PROXY_SUCCESSOR",
    "ChainEnd",
    "Conductor",
    "Direction",
    "Proxy",
    "SuccessorLink",
    "serve_proxy",
    "unwrap",
    "wrap",
]
