"""Remote ACP transport, server side: the server-wide memory budget and the refused-id check.

Owns ``MemoryBudget``: the bytes one ``RemoteApp`` holds for all its peers together (request
bodies being read, every connection's queued input and output) against
``RemoteLimits.max_total_buffered_bytes``, and wakes the connections waiting for room when some
is freed. The per-connection caps alone let a few hundred clients that stop reading hold
gigabytes; this one bounds the sum. Also ``refused_id``: the request ids the runtime would refuse,
which the transport answers itself (the runtime's answer names no id, so it could not be routed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..jsonrpc import Limits
from .limits import RemoteLimits

RUNTIME_MAX_ID_CHARS: Final = Limits().max_id_chars
_INT64: Final = 1 << 63


class MemoryBudget:
    """Bytes held for every peer of one server, against a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # Output waits at three quarters: clients that stop reading cannot take the room a new
        # client's request needs (they are cut after their stall, which frees theirs).
        self.output_limit = limit * 3 // 4
        self.used = 0
        self.output_used = 0  # the part of `used` queued for clients
        self._waiters: set[Callable[[], None]] = set()

    @property
    def full(self) -> bool:
        """Whether nothing more fits."""
        return self.used >= self.limit

    @property
    def output_full(self) -> bool:
        """Whether output for clients must wait (its share is spent)."""
        return self.output_used >= self.output_limit

    def try_take(self, size: int) -> bool:
        """Reserve ``size`` bytes if they fit (False: they do not, nothing reserved)."""
        if self.used + size > self.limit:
            return False
        self.used += size
        return True

    def change_output(self, delta: int) -> None:
        """``change`` for output queued for clients (also counted in its own share)."""
        self.output_used += delta
        self.change(delta)

    def change(self, delta: int) -> None:
        """Count bytes queued (positive) or released (negative); wake waiters when room opens."""
        self.used += delta
        if delta < 0 and self._waiters and self.used < self.limit:
            for wake in list(self._waiters):
                wake()

    def wait_with(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` whenever room opens, until ``done_waiting``."""
        self._waiters.add(wake)

    def done_waiting(self, wake: Callable[[], None]) -> None:
        """Stop calling ``wake``."""
        self._waiters.discard(wake)


def refused_id(message: dict[str, Any], limits: RemoteLimits) -> bool:
    """Whether a message's id is an int or string the runtime refuses (longer than the runtime's
    or the transport's limit, or outside a signed 64-bit integer)."""
    value = message.get("id")
    if isinstance(value, str):
        return len(value) > min(limits.max_id_length, RUNTIME_MAX_ID_CHARS)
    if isinstance(value, int) and not isinstance(value, bool):
        return not -_INT64 <= value < _INT64
    return False


def refusal(problem: str) -> dict[str, Any]:
    """The JSON-RPC error answering a request the transport refuses (its id cannot be echoed)."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": problem}}
