"""Peers and handlers: what the generated `Agent`, `Client`, `AgentPeer` and `ClientPeer` build on,
and the lifetimes of the processes they talk to.

- `handlers`: `Binding` (a package's method tables), `AgentHandler` / `ClientHandler` (bases of
  the generated handler classes, generic in their peer).
- `base`: `PeerBase` (sending on a connection: time limits, cancellation, extension methods) and
  `AgentPeerBase` (an agent we started: its process and stderr).
- `build`: `build`, which makes a params model from a builder's arguments.
- `process`: `agent_process`, `stop_process`, `StderrTail`, `Serving`.
- `run`: `serve_agent`, `spawn_agent`, `connect_agent`, for the handler of any package.
"""

from __future__ import annotations

from .base import AgentPeerBase, PeerBase
from .build import build, extension_method
from .handlers import AgentHandler, Binding, ClientHandler, Handler
from .process import (
    DEFAULT_GRACE,
    Serving,
    StderrOption,
    StderrTail,
    agent_process,
    stop_process,
)
from .run import SpawnOptions, connect_agent, serve_agent, spawn_agent

__all__ = [
    "DEFAULT_GRACE",
    "AgentHandler",
    "AgentPeerBase",
    "Binding",
    "ClientHandler",
    "Handler",
    "PeerBase",
    "Serving",
    "SpawnOptions",
    "StderrOption",
    "StderrTail",
    "agent_process",
    "build",
    "connect_agent",
    "extension_method",
    "serve_agent",
    "spawn_agent",
    "stop_process",
]
