"""What both generated peers (`AgentPeer`, `ClientPeer`) share whatever the schema: the
connection they send on, a time limit for the requests of a block, cancelling one of our
requests, and extension requests and notifications; and what an agent's peer adds when the agent
is a process of ours (`AgentPeerBase`).
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from typing import Any, TypeVar, overload

from ..jsonrpc import LIMIT_TIMEOUT, Connection, Timeout, timeout_block
from .build import extension_method
from .process import StderrTail

_T = TypeVar("_T")


class PeerBase:
    """The other side of a connection: the typed senders of each peer class build on this."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def request_timeout(self, seconds: float | None) -> AbstractContextManager[None]:
        """`with peer.request_timeout(30): await peer.session_prompt(...)`: every request sent on
        this peer's connection inside the block (in this task and the tasks it starts) without
        its own `timeout=` raises `TimeoutError` after `seconds` (None: no limit), and the peer
        is told to cancel. Outside, the connection's `Limits.request_timeout` applies. A task
        started inside the block keeps its limit (as it keeps every context variable); the
        handlers the connection runs never take it."""
        return timeout_block(self.connection, seconds)

    async def cancel_request(self, request_id: int | str) -> None:
        """Send `$/cancel_request` for one of our outstanding requests."""
        await self.connection.cancel_request(request_id)

    @overload
    async def ext_request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[_T],
        timeout: Timeout = LIMIT_TIMEOUT,
    ) -> _T: ...

    @overload
    async def ext_request(
        self, method: str, params: Any = None, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any: ...

    async def ext_request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = None,
        timeout: Timeout = LIMIT_TIMEOUT,
    ) -> Any:
        """Send a `_`-prefixed extension request; its result validated into `result_type` (raw JSON
        without). `timeout` seconds (default: the connection's `Limits.request_timeout`; `None`: no
        limit) raises `TimeoutError` after telling the peer to cancel."""
        return await self.connection.request(
            extension_method(method), params, result_type, timeout=timeout
        )

    async def ext_notify(self, method: str, params: Any = None) -> None:
        """Send a `_`-prefixed extension notification."""
        await self.connection.notify(extension_method(method), params)


class AgentPeerBase(PeerBase):
    """The agent as the client sees it; `process` and `stderr` are set when we started it."""

    process: asyncio.subprocess.Process | None = None
    """The agent process (set by `spawn_agent` and `connect_agent`)."""

    stderr: StderrTail | None = None
    """The agent's captured stderr (`spawn_agent(..., stderr=subprocess.PIPE)`)."""
