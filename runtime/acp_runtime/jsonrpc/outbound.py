"""JSON-RPC 2.0 runtime, outbound requests: the table of our requests awaiting an answer.

Owns our request ids, the pending entry of each request (its future, and the inbound handler it
was sent from, if any), the ids of requests we gave up on (so that their late answers are not
reported as unknown, bounded by ``_ABANDONED_MAX``), and every way a pending request ends: its
answer (delivered through the ordering ``Ledger``), a failure we detected on its response, or the
end of the connection. Also counts the pending requests one of our handlers awaits: while there
are any, reading must go on (see ``Limits.max_queued_notifications``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from .framing import RequestId, RpcError
from .limits import _ABANDONED_MAX
from .log import PeerLog
from .loop import LoopRef
from .ordering import ORIGIN, Ledger, Origin


@dataclass(slots=True, eq=False)
class Pending:
    """One of our requests, sent and not yet answered."""

    method: str
    future: asyncio.Future[Any]
    origin: Origin | None
    answered: bool = False
    """A response arrived (its delivery may still wait for earlier notifications)."""


class RequestTable:
    """Our outbound requests by id."""

    def __init__(self, ledger: Ledger, log: PeerLog, loop: LoopRef) -> None:
        self._ledger = ledger
        self._log = log
        self._loop = loop
        self._next_id = 0
        self._pending: dict[int, Pending] = {}
        self._abandoned: set[RequestId] = set()
        self.handler_waits = 0
        """Pending, unanswered requests that a handler of this connection awaits."""

    def __len__(self) -> int:
        return len(self._pending)

    def open(self, method: str) -> tuple[int, Pending]:
        """A new id and its pending entry (the caller awaits ``entry.future``)."""
        request_id = self._next_id
        self._next_id += 1
        origin = ORIGIN.get()
        if origin is not None and origin.ledger is not self._ledger:
            origin = None
        entry = Pending(method, self._loop().create_future(), origin)
        self._pending[request_id] = entry
        if origin is not None:
            self.handler_waits += 1
            self._ledger.progress()  # reading may have to go on past the inbound limits
        return request_id, entry

    def _answered(self, entry: Pending) -> None:
        if not entry.answered:
            entry.answered = True
            if entry.origin is not None:
                self.handler_waits -= 1

    def close(self, request_id: int) -> Pending | None:
        """The caller is done with ``request_id``: forget it. Returns the entry if it was open."""
        entry = self._pending.pop(request_id, None)
        if entry is not None:
            self._answered(entry)
        return entry

    def renew(self, request_id: int, entry: Pending) -> bool:
        """The caller's wait for ``entry`` was cancelled, which cancelled its future, and it
        still wants the answer (``relay``): the entry gets a fresh future, which the answer
        settles. False if the request is no longer pending (given up, closed)."""
        if self._pending.get(request_id) is not entry:
            return False
        if entry.future.cancelled():
            entry.future = self._loop().create_future()
        return True

    def give_up(self, request_id: int) -> bool:
        """The caller stopped waiting (cancelled, timed out): True if the peer should be told."""
        entry = self._pending.pop(request_id, None)
        if entry is None or entry.answered:
            return False
        self._answered(entry)
        entry.future.cancel()
        if len(self._abandoned) >= _ABANDONED_MAX:
            self._abandoned.clear()
        self._abandoned.add(request_id)
        return True

    def answer(self, request_id: Any, outcome: Any, error: RpcError | None) -> None:
        """The peer answered ``request_id``: deliver ``outcome`` (or ``error``) in order."""
        entry = self._pending.get(request_id) if type(request_id) is int else None
        if entry is None or entry.answered:
            if request_id in self._abandoned:
                self._abandoned.discard(request_id)
                self._log.debug(
                    "late", "late response for cancelled request %r ignored", request_id
                )
            else:
                self._log.warning(
                    "unknown-id", "response for unknown request id %r ignored", request_id
                )
            return
        self._settle(entry, outcome, error)

    def fail(self, request_id: int, error: BaseException) -> bool:
        """Fail ``request_id`` because of what the peer sent (in order, like an answer)."""
        entry = self._pending.get(request_id)
        if entry is None or entry.answered:
            return False
        self._settle(entry, None, error)
        return True

    def _settle(self, entry: Pending, outcome: Any, error: BaseException | None) -> None:
        self._answered(entry)

        def deliver() -> None:
            if not entry.future.done():
                if error is not None:
                    entry.future.set_exception(error)
                else:
                    entry.future.set_result(outcome)

        self._ledger.deliver_in_order(deliver, entry.origin)

    def only_unanswered(self) -> int | None:
        """The id of the one request still awaiting an answer, if exactly one is."""
        found = [request_id for request_id, e in self._pending.items() if not e.answered]
        return found[0] if len(found) == 1 else None

    def fail_unanswered(self, error: BaseException) -> None:
        """No answer can come any more (end of input): fail every request still awaiting one."""
        for entry in self._pending.values():
            if not entry.answered:
                self._answered(entry)
                if not entry.future.done():
                    entry.future.set_exception(error)

    def fail_all(self, error: BaseException) -> None:
        """The connection is closed: fail everything, answered or not, at once."""
        self._ledger.flush()
        self.fail_unanswered(error)
        self._pending.clear()
