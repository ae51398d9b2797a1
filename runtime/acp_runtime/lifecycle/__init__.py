"""The prompt lifecycle by construction: the runtime runs the turn, the agent writes what it does.

Agent side: `TurnAgent` (put it before a generated `Agent`) answers the session methods of ACP v1
and v2 alike and runs each prompt's `respond(turn)` (`Turn`, `ToolCall`): insertion, message ids,
`running` / `idle` and stop reasons, cancellation, errors, one turn at a time per session, and
the history `session/resume` replays (`HistoryStore`: `MemoryHistory` by default,
`SqliteHistory` to survive a restart, `RedisHistory` for several hosts; share one `Sessions`
between the agents of several connections to resume a session over a new one, one store between
workers to resume it on another worker). Client side: `PromptingClient` (before a generated
`Client`): `await client.prompt(session_id, ...)` returns when the turn is over, with its stop
reason and its messages.
"""

from __future__ import annotations

from .agent import TurnAgent
from .client import PromptingClient, PromptTurn, TurnResult
from .history import HistoryStore, MemoryHistory
from .redis_store import RedisHistory
from .session import LiveSession, Sessions
from .sqlite_store import SqliteHistory
from .turn import ToolCall, Turn
from .wire import ALLOW_OR_REJECT, Dialect

__all__ = [
    "ALLOW_OR_REJECT",
    "Dialect",
    "HistoryStore",
    "LiveSession",
    "MemoryHistory",
    "PromptTurn",
    "PromptingClient",
    "RedisHistory",
    "Sessions",
    "SqliteHistory",
    "ToolCall",
    "Turn",
    "TurnAgent",
    "TurnResult",
]
