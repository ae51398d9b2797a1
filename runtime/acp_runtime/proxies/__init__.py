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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .conductor import ChainEnd as ChainEnd
    from .conductor import Conductor as Conductor
from .envelope import INITIALIZE, PROXY_INITIALIZE, PROXY_SUCCESSOR, SuccessorLink, unwrap, wrap
from .proxy import Direction, Proxy, serve_proxy

ProxyBase = Proxy
"""`Proxy` under the name the generated packages import it by (their own `Proxy` subclasses it)."""

__all__ = [
    "INITIALIZE",
    "PROXY_INITIALIZE",
    "PROXY_SUCCESSOR",
    "ChainEnd",
    "Conductor",
    "Direction",
    "Proxy",
    "ProxyBase",
    "SuccessorLink",
    "serve_proxy",
    "unwrap",
    "wrap",
]


# Defined for the interpreter only (a type checker sees the imports above).
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """PEP 562: the conductor loads at its first use (a generated package imports
        `ProxyBase` from here at import, and needs none of it)."""
        if name in ("ChainEnd", "Conductor"):
            from . import conductor

            return getattr(conductor, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
