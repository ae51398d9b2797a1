"""`RedisHistory`: session history in Redis, the store that several hosts share.

Needs the `redis` extra (`pip install 'acp-runtime[redis]'`), imported when a store is made.
Per session, three keys under `prefix` carry the session id in braces (a Redis Cluster hash tag,
so they live on one node and one script may touch them all): a hash of entries by key, a list
of the keys in timeline order, and the session's description. Each operation is one command or
one server-side script, so it is atomic and a crash of the caller between two leaves nothing half
written; it returns once Redis has answered. What survives a crash of Redis itself is Redis's
configuration: `appendonly yes` with `appendfsync always` syncs every acknowledged write
(`everysec`, Redis's default, may lose the last second). `ttl` (seconds) expires a session that
was not written to for that long, so abandoned sessions do not accumulate.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from .history import Json

# KEYS: entries hash, order list, description; ARGV: key, entry, ttl. A new key goes to the end
# of the order; a write keeps the whole session alive for `ttl` more seconds.
_PUT = """
if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[1]) end
if tonumber(ARGV[3]) > 0 then
  for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ARGV[3]) end
end
"""
_REMOVE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then redis.call('LREM', KEYS[2], 1, ARGV[1]) end
"""
# The entries in order, read in one step (a write cannot fall between the list and the hash).
_ENTRIES = """
local order = redis.call('LRANGE', KEYS[2], 0, -1)
if #order == 0 then return {} end
return redis.call('HMGET', KEYS[1], unpack(order))
"""


def _dumps(value: Json) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class RedisHistory:
    """A `HistoryStore` in Redis at `url` (`redis://host:port/db`, `rediss://` for TLS), or on
    a `client` (a `redis.asyncio.Redis`) the caller made and closes."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "acp:",
        ttl: int | None = None,
        client: Any = None,
    ) -> None:
        if client is None:
            try:  # by name: an optional dependency the type checker need not have installed
                aioredis: Any = importlib.import_module("redis.asyncio")
            except ImportError as error:
                raise ImportError(
                    "RedisHistory needs the redis client: pip install 'acp-runtime[redis]'"
                ) from error
            client = aioredis.Redis.from_url(url, decode_responses=True)
            self._owned = True
        else:
            self._owned = False
        self._redis: Any = client
        self._prefix = prefix
        self._ttl = int(ttl or 0)
        self._put = client.register_script(_PUT)
        self._remove = client.register_script(_REMOVE)
        self._entries = client.register_script(_ENTRIES)

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        base = f"{self._prefix}{{{session_id}}}"
        return f"{base}:entries", f"{base}:order", f"{base}:info"

    async def get(self, session_id: str, key: str) -> Json | None:
        """One entry, or None."""
        text = await self._redis.hget(self._keys(session_id)[0], key)
        return None if text is None else dict(json.loads(text))

    async def put(self, session_id: str, key: str, entry: Json) -> None:
        """Insert at the end, or replace in place (its position in the order list stays)."""
        await self._put(keys=list(self._keys(session_id)), args=[key, _dumps(entry), self._ttl])

    async def remove(self, session_id: str, key: str) -> None:
        """Drop one entry (no error if absent)."""
        entries, order, _ = self._keys(session_id)
        await self._remove(keys=[entries, order], args=[key])

    async def entries(self, session_id: str) -> list[Json]:
        """The session's entries in timeline order."""
        entries, order, _ = self._keys(session_id)
        texts = await self._entries(keys=[entries, order])
        return [dict(json.loads(text)) for text in texts if text is not None]

    async def forget(self, session_id: str) -> None:
        """Drop the session's entries and description."""
        await self._redis.delete(*self._keys(session_id))

    async def save_session(self, session_id: str, info: Json) -> None:
        """Keep the session's description."""
        await self._redis.set(self._keys(session_id)[2], _dumps(info), ex=self._ttl or None)

    async def load_session(self, session_id: str) -> Json | None:
        """The session's description, or None."""
        text = await self._redis.get(self._keys(session_id)[2])
        return None if text is None else dict(json.loads(text))

    async def close(self) -> None:
        """Close the connection pool this store made (not a client it was given)."""
        if self._owned:
            await self._redis.aclose()
