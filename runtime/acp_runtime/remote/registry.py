"""Remote ACP transport, server side: the registry of one app's live connections.

Owns ``Registry``: the live connections and the principal each belongs to, which session is held
by which connection, the server-wide memory budget, the reaper closing idle connections and those
that never got past ``initialize`` (``setup_timeout``), the eviction of the client holding the
most unread output while the budget is spent, and the bounded closing of everything at shutdown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from .budget import MemoryBudget
from .conn import RemoteConnection, Transport
from .limits import RemoteLimits


class LimitExceeded(Exception):
    """A limit of the server (``max_connections``) refuses a new connection."""


class Registry:
    """The live connections of one ASGI app, the sessions they hold, and the idle reaper."""

    def __init__(self, limits: RemoteLimits) -> None:
        self.limits = limits
        self.budget = MemoryBudget(limits.max_total_buffered_bytes)
        self.connections: dict[str, RemoteConnection] = {}
        self.holders: dict[str, RemoteConnection] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reaper: asyncio.Task[None] | None = None
        self._last_eviction = 0.0

    def create(self, transport: Transport, principal: object) -> RemoteConnection:
        """A new connection (``LimitExceeded`` past ``max_connections``)."""
        if len(self.connections) >= self.limits.max_connections:
            raise LimitExceeded("too many connections")
        connection = RemoteConnection(self, transport, principal)
        self.connections[connection.id] = connection
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap())
        return connection

    def get(self, connection_id: str, principal: object) -> RemoteConnection | None:
        """The live connection of that id, if ``principal`` owns it."""
        connection = self.connections.get(connection_id)
        if connection is None or connection.closed or connection.principal != principal:
            return None
        return connection

    def forget(self, connection: RemoteConnection) -> None:
        """Drop a closed connection and the sessions it held."""
        if self.connections.get(connection.id) is connection:
            del self.connections[connection.id]
        for session_id in connection.held:
            if self.holders.get(session_id) is connection:
                del self.holders[session_id]

    def evict_stalled(self) -> None:
        """The memory budget is spent: cut the client holding the most output unread, preferring
        one that took none in the last second (at most one a second, while the budget stays
        spent). A client that reads keeps little queued; one that stops reading would otherwise
        keep its share until its stall, and refill what others free."""
        now = asyncio.get_running_loop().time()
        if now - self._last_eviction < 1.0:
            return
        self._last_eviction = now
        holders = [c for c in self.connections.values() if c.buffered and not c.closed]
        if not holders:
            return
        stalled = [c for c in holders if now - c.last_taken > 1.0]
        victim = max(stalled or holders, key=lambda c: c.buffered)
        victim.close(f"server memory budget spent: {victim.buffered} bytes of output unread")

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run an agent or a background step (closing a connection), keeping a reference to it
        (``close_all`` waits for them, then cancels what is left)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _reap(self) -> None:
        # Runs while there are connections; `create` starts it again afterwards. A flood of
        # connections that stop after `initialize` holds its slots for `setup_timeout` at most.
        idle, setup = self.limits.idle_timeout, self.limits.setup_timeout
        loop = asyncio.get_running_loop()
        while self.connections:
            await asyncio.sleep(min(idle / 4, setup / 4, 2.5))
            now = loop.time()
            for connection in list(self.connections.values()):
                if now - connection.last_activity > idle:
                    connection.close(f"idle for {idle} s")
                elif not connection.setup_done:
                    # setup_timeout for the answer, and again for the client's next message
                    since = (
                        connection.initialized_at if connection.initialized else connection.created
                    )
                    if now - since > setup:
                        connection.close(f"not past initialize within setup_timeout ({setup} s)")

    async def close_all(self, timeout: float | None = None) -> None:
        """Close every connection and wait (``timeout`` at most) for their agents to stop; the
        agents still running then are cancelled."""
        for connection in list(self.connections.values()):
            connection.close("server shutting down")
        if self._reaper is not None:
            self._reaper.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        left = list(self._tasks)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=1.0)
