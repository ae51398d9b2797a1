"""Several protocol versions on one connection, for the handlers of any generated packages.

- `router`: the agent side, `VersionRouter` and `serve_versions` (one agent command for v1 and v2
  clients, following the reference TypeScript SDK's `AgentProtocolRouter`).
- `negotiate`: the client side, `negotiate` and `spawn_negotiated` (ask for the newest version,
  continue in the agent's).
- `lines`: the line reader both use before a connection exists.

Both are generic in the handlers they are given: a router of `V1Agent` and `V2Agent` routes to
one of them, and a negotiation between `acp_v1.Client` and `acp_v2_draft.Client` yields one of
their packages' `AgentPeer`.
"""

from __future__ import annotations

from .negotiate import (
    InitializeParams,
    Negotiated,
    UnsupportedVersionError,
    is_v1_body,
    negotiate,
    spawn_negotiated,
)
from .router import (
    UNSUPPORTED_PROTOCOL_VERSION,
    Handlers,
    Routed,
    VersionRouter,
    serve_versions,
)

__all__ = [
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Handlers",
    "InitializeParams",
    "Negotiated",
    "Routed",
    "UnsupportedVersionError",
    "VersionRouter",
    "is_v1_body",
    "negotiate",
    "serve_versions",
    "spawn_negotiated",
]
