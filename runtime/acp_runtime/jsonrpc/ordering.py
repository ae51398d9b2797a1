"""JSON-RPC 2.0 runtime, ordering: responses wait for the notifications received before them.

Owns the ledger of inbound notifications not yet handled (in arrival order, with their order
key) and the deliveries of responses waiting on it. A response received after notification N
is delivered to its caller only once N's handler has finished; see ``jsonrpc`` for the guarantee.

Deadlocks are avoided in two ways. A handler that awaits one of our requests is its own origin
(``ORIGIN``, a context variable set while a handler runs, inherited by the tasks it starts): the
response to that request does not wait for that handler, nor for the notifications queued behind
it under the same order key, since they cannot run before it ends. Anything else a handler may
wait for (say, an event set after some other response) is bounded by ``ordering_timeout``: then
the response is delivered anyway and a warning logged.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import NamedTuple

from .log import PeerLog


class Origin(NamedTuple):
    """The inbound handler a task runs for: a notification (``seq`` set) or a request.

    A tuple: one is made per notification handled, ``tuple.__new__(Origin, (ledger, seq, key))``
    without a call in Python."""

    ledger: Ledger
    seq: int | None
    key: Hashable | None


_GONE = object()


def _nothing() -> None:
    pass


ORIGIN: contextvars.ContextVar[Origin | None] = contextvars.ContextVar(
    "acp_rpc_origin", default=None
)


@dataclass(slots=True, eq=False)
class _Delivery:
    mark: int
    origin: Origin | None
    deliver: Callable[[], None]
    timer: asyncio.TimerHandle | None = None


class Ledger:
    """Notifications received and not yet handled, and the responses waiting for them."""

    def __init__(self, timeout: float, log: PeerLog) -> None:
        self._timeout = timeout
        self._log = log
        self.next_seq = 0
        """The sequence number of the next notification received."""
        self._open: dict[int, Hashable | None] = {}  # seq -> order key, in arrival order
        self.open = self._open
        """The notifications received and not yet handled, by sequence number (read-only)."""
        self._waiting: list[_Delivery] = []
        self.progress: Callable[[], None] = _nothing
        """Called when a notification is done (reading may resume)."""

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, key: Hashable | None) -> int:
        """Record a notification as received; returns its sequence number."""
        seq = self.next_seq
        self.next_seq = seq + 1
        self._open[seq] = key
        return seq

    def done(self, seq: int) -> None:
        """The notification's handler has finished (or it will never run)."""
        if self._open.pop(seq, _GONE) is not _GONE:
            if self._waiting:
                self._release()
            self.progress()

    def deliver_in_order(self, deliver: Callable[[], None], origin: Origin | None) -> None:
        """Call ``deliver`` once every notification received so far has been handled."""
        if not self._open:
            deliver()  # nothing received is still being handled: the common case, at once
            return
        if origin is not None and origin.ledger is not self:
            origin = None  # a handler of another connection: it is not ours to wait for
        entry = _Delivery(self.next_seq, origin, deliver)
        if self._clear(entry):
            deliver()
            return
        entry.timer = asyncio.get_running_loop().call_later(self._timeout, self._expire, entry)
        self._waiting.append(entry)

    def flush(self) -> None:
        """Deliver everything still waiting (the connection is shutting down)."""
        waiting, self._waiting = self._waiting, []
        for entry in waiting:
            self._finish(entry)

    def _clear(self, entry: _Delivery) -> bool:
        origin = entry.origin
        for seq, key in self._open.items():
            if seq >= entry.mark:
                return True
            if origin is None or origin.seq is None:
                return False
            # The origin itself, and what queues behind it under its key, cannot finish first.
            if seq != origin.seq and (key is None or key != origin.key or seq < origin.seq):
                return False
        return True

    def _release(self) -> None:
        ready = [entry for entry in self._waiting if self._clear(entry)]
        if ready:
            self._waiting = [entry for entry in self._waiting if entry not in ready]
            for entry in ready:
                self._finish(entry)

    def _expire(self, entry: _Delivery) -> None:
        if entry in self._waiting:
            self._waiting.remove(entry)
            self._log.warning(
                "ordering",
                "a response waited %g s for earlier notifications' handlers; delivered anyway",
                self._timeout,
            )
            self._finish(entry)

    @staticmethod
    def _finish(entry: _Delivery) -> None:
        if entry.timer is not None:
            entry.timer.cancel()
        entry.deliver()
