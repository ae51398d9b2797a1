"""Session history: what `session/resume` replays, materialized as the prompt lifecycle asks.

`record` folds each update a session sends into the entries of a `HistoryStore`, one entry per
ID-addressed entity (a message by `messageId`, a tool call, a plan, a compaction, a terminal, a
subagent), in the timeline position of the entity's first update: later updates and chunks patch
the entry in place (chunks append to its content, a full update replaces it, `null` clears). A
replay thus sends each entity once, materialized, with its original id: a compaction as one
`compaction_update` with its final status and summary, not its start/chunk/finish sequence.
Live-only updates are never recorded: `notice` (not session history), and the foreground state
and usage (`state_update`, `usage_update`: `session/resume` reports the current state instead).
An update of a kind this runtime does not know is kept raw, in arrival order.

The store interface is small and async, so a database can stand behind it; `MemoryHistory` is
the default, in memory, for the process's life. `SqliteHistory` (`sqlite_store`: one host, survives
a restart) and `RedisHistory` (`redis_store`: several hosts) keep it in a database. A store also
keeps each session's description (`save_session`), which lets another process take the session
over: `session/resume` on a worker that never saw it, or after a restart.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

Json = dict[str, Any]

LIVE_ONLY = frozenset({"notice", "state_update", "usage_update", "terminal_output_chunk"})
"""Updates never replayed (terminal output: display bytes, the terminal entry stays)."""

# chunk kind -> (entity kind, id field, field its content appends to)
_CHUNKS: Mapping[str, tuple[str, str, str]] = {
    "user_message_chunk": ("user_message", "messageId", "content"),
    "agent_message_chunk": ("agent_message", "messageId", "content"),
    "agent_thought_chunk": ("agent_thought", "messageId", "content"),
    "session_message_chunk": ("session_message", "messageId", "content"),
    "tool_call_content_chunk": ("tool_call_update", "toolCallId", "content"),
    "compaction_summary_chunk": ("compaction_update", "compactionId", "summary"),
}
# entity kind -> its id field (an upsert patches the entry field by field)
_ENTITIES: Mapping[str, str] = {
    "user_message": "messageId",
    "agent_message": "messageId",
    "agent_thought": "messageId",
    "session_message": "messageId",
    "tool_call_update": "toolCallId",
    "tool_call": "toolCallId",  # v1's creation; its updates patch the same entry
    "compaction_update": "compactionId",
    "terminal_update": "terminalId",
    "subagent_update": "sessionId",
}
# one entry per kind, the latest replacing the earlier ones in place
_SINGLETONS = frozenset(
    {"available_commands_update", "config_option_update", "session_info_update", "plan"}
)
_unique = itertools.count()
# Anonymous entries (a chunk without id, a raw update) are keyed by this process and a counter:
# another process taking a session over (a worker after a failover) must not reuse a key.
_PROCESS = uuid.uuid4().hex[:12]


def _anonymous(prefix: str) -> str:
    return f"{prefix}:#{_PROCESS}.{next(_unique)}"


class HistoryStore(Protocol):
    """Where a session's materialized entries live: keyed, ordered by first insertion."""

    async def get(self, session_id: str, key: str) -> Json | None:
        """One entry, or None."""
        ...

    async def put(self, session_id: str, key: str, entry: Json) -> None:
        """Insert an entry at the end, or replace it in place if the key is there."""
        ...

    async def remove(self, session_id: str, key: str) -> None:
        """Drop one entry (no error if absent)."""
        ...

    async def entries(self, session_id: str) -> list[Json]:
        """The session's entries in timeline order (what a replay sends)."""
        ...

    async def forget(self, session_id: str) -> None:
        """Drop the whole session: its entries and its description."""
        ...

    async def save_session(self, session_id: str, info: Json) -> None:
        """Keep the session's description (JSON: its cwd, version, title), replacing the last."""
        ...

    async def load_session(self, session_id: str) -> Json | None:
        """The session's description, or None if the store does not know the session."""
        ...


class MemoryHistory:
    """The default `HistoryStore`: dictionaries in memory (insertion order is the timeline)."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, Json]] = {}
        self._infos: dict[str, Json] = {}

    async def get(self, session_id: str, key: str) -> Json | None:
        """One entry, or None."""
        return self._sessions.get(session_id, {}).get(key)

    async def put(self, session_id: str, key: str, entry: Json) -> None:
        """Insert at the end, or replace in place (a dict keeps a replaced key's position)."""
        self._sessions.setdefault(session_id, {})[key] = entry

    async def remove(self, session_id: str, key: str) -> None:
        """Drop one entry."""
        self._sessions.get(session_id, {}).pop(key, None)

    async def entries(self, session_id: str) -> list[Json]:
        """The entries in timeline order."""
        return list(self._sessions.get(session_id, {}).values())

    async def forget(self, session_id: str) -> None:
        """Drop the session."""
        self._sessions.pop(session_id, None)
        self._infos.pop(session_id, None)

    async def save_session(self, session_id: str, info: Json) -> None:
        """Keep the session's description."""
        self._infos[session_id] = dict(info)

    async def load_session(self, session_id: str) -> Json | None:
        """The session's description, or None."""
        info = self._infos.get(session_id)
        return None if info is None else dict(info)


def _append(entry: Json, field: str, item: Any) -> None:
    current = entry.get(field)
    entry[field] = [*(current if isinstance(current, list) else []), item]


async def record(store: HistoryStore, session_id: str, update: Mapping[str, Any]) -> None:
    """Fold one sent update (JSON, wire names) into the session's materialized entries."""
    kind = str(update.get("sessionUpdate"))
    if kind in LIVE_ONLY:
        return
    if kind in _CHUNKS:
        entity, id_field, field = _CHUNKS[kind]
        entity_id = update.get(id_field)
        key = f"{entity}:{entity_id}" if entity_id is not None else _anonymous(entity)
        entry = await store.get(session_id, key) or {"sessionUpdate": entity}
        if entity_id is not None:
            entry[id_field] = entity_id
        for name in ("senderSessionId", "recipientSessionId"):  # a session message's parties
            if update.get(name) is not None:
                entry[name] = update[name]
        _append(entry, field, update.get("content"))  # a chunk's `_meta` is its own: not kept
        await store.put(session_id, key, entry)
    elif kind in _ENTITIES:
        entity = "tool_call_update" if kind == "tool_call" else kind
        key = f"{entity}:{update.get(_ENTITIES[kind])}"
        known = await store.get(session_id, key)
        first = kind if known is None else known["sessionUpdate"]  # v1: `tool_call` stays first
        merged = {**(known or {}), **update, "sessionUpdate": first}  # omitted stays, null clears
        await store.put(session_id, key, merged)
    elif kind == "plan_update":
        plan = update.get("plan")
        plan_id = plan.get("planId") if isinstance(plan, Mapping) else None
        await store.put(session_id, f"plan:{plan_id}", dict(update))
    elif kind == "plan_removed":
        await store.remove(session_id, f"plan:{update.get('planId')}")
    elif kind in _SINGLETONS:
        await store.put(session_id, kind, dict(update))
    else:  # unknown to this runtime: kept as it came
        await store.put(session_id, _anonymous("raw"), dict(update))
