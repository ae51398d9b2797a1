"""JSON-RPC 2.0 runtime, inbound notifications: queues per order key and their workers.

Owns the handling of notifications once received: each is admitted to the ordering ``Ledger``
(which also counts them for ``Limits.max_queued_notifications``), queued under its order key and
run by that key's worker task, one after another in arrival order; a key of None runs at once in
a task of its own. A notification whose params are not validated yet (a typed one, see
``Dispatcher``) is validated by its worker just before its handler runs. An idle worker waits on
its entry in ``_idle`` (oldest first) for more; past ``_IDLE_WORKERS_MAX`` idle keys the oldest
retires and its key starts afresh on its next message. At the end of input workers finish their
queues and exit (``finish``); ``drop_queued`` forgets what a shutdown could not wait for.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeAlias

import pydantic

from .limits import _IDLE_WORKERS_MAX
from .log import PeerLog
from .ordering import ORIGIN, Ledger, Origin

Job: TypeAlias = tuple[
    int, Hashable | None, str, Callable[..., Awaitable[Any]], Any, Callable[[Any], Any] | None
]
"""A queued notification: (ledger sequence number, order key, method, handler, arguments,
validator): without a validator the arguments are a tuple, else the params the validator makes
the handler's one argument of."""


class NotificationQueues:
    """The notifications of one connection received and not yet handled."""

    def __init__(self, ledger: Ledger, log: PeerLog) -> None:
        self._ledger = ledger
        self._log = log
        self._queues: dict[Hashable, deque[Job]] = {}
        self._workers: dict[Hashable, asyncio.Task[None]] = {}
        self._idle: dict[Hashable, asyncio.Future[bool]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._finishing = False

    def __len__(self) -> int:
        """Received and not yet handled (queued or running)."""
        return len(self._ledger)

    def submit(
        self,
        key: Hashable | None,
        method: str,
        function: Callable[..., Awaitable[Any]],
        args: Any,
        validate: Callable[[Any], Any] | None = None,
    ) -> None:
        """Queue one notification for its handler: ``function(*args)``, or with ``validate``
        ``function(validate(args))`` (invalid params are then logged and dropped in turn)."""
        ledger = self._ledger
        seq = ledger.next_seq  # `Ledger.admit`, inlined
        ledger.next_seq = seq + 1
        ledger.open[seq] = key
        job: Job = (seq, key, method, function, args, validate)
        if key is None:
            task = asyncio.ensure_future(self._run(deque((job,))))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return
        queue = self._queues.get(key)
        if queue is not None:
            queue.append(job)
            waiter = self._idle.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(True)
            return
        queue = deque((job,))
        self._queues[key] = queue
        self._workers[key] = asyncio.create_task(self._drain(key, queue))

    def tasks(self) -> list[asyncio.Task[None]]:
        """Every task running handlers (workers and unordered notifications)."""
        return [*self._workers.values(), *self._background]

    def finish(self) -> None:
        """No more notifications will come: workers exit once their queue is empty."""
        self._finishing = True
        for waiter in self._idle.values():
            if not waiter.done():
                waiter.set_result(False)
        self._idle.clear()

    def drop_queued(self) -> int:
        """Forget every queued notification (shutdown); returns how many were dropped."""
        dropped = 0
        for queue in self._queues.values():
            for job in queue:
                self._ledger.done(job[0])
            dropped += len(queue)
            queue.clear()
        return dropped

    async def _drain(self, key: Hashable, queue: deque[Job]) -> None:
        run = self._run
        loop = asyncio.get_running_loop()
        try:
            while True:
                await run(queue)
                if self._finishing:
                    return
                # Idle: wait for the next notification with this key (or retirement).
                if len(self._idle) >= _IDLE_WORKERS_MAX:
                    self._retire_oldest_idle()
                waiter: asyncio.Future[bool] = loop.create_future()
                self._idle[key] = waiter
                if not await waiter:
                    return
        finally:
            if self._idle.get(key) is not None and self._queues.get(key) is queue:
                del self._idle[key]
            if self._queues.get(key) is queue:
                del self._queues[key]
                for job in queue:  # cancelled with work left: it will never run
                    self._ledger.done(job[0])
            if self._workers.get(key) is asyncio.current_task():
                del self._workers[key]

    def _retire_oldest_idle(self) -> None:
        key = next(iter(self._idle))
        waiter = self._idle.pop(key)
        # From now on the key has no queue: its next notification starts a new worker.
        self._queues.pop(key, None)
        self._workers.pop(key, None)
        if not waiter.done():
            waiter.set_result(False)

    async def _run(self, queue: deque[Job]) -> None:
        """Handle the queued notifications one after another until none is left (one coroutine
        for all of them: a message costs no coroutine of the queue's own)."""
        ledger, log = self._ledger, self._log
        set_origin, origin = ORIGIN.set, tuple.__new__
        while queue:
            seq, key, method, function, args, validate = queue.popleft()
            if validate is not None:
                try:
                    args = (validate(args),)
                except pydantic.ValidationError as exc:
                    log.warning(
                        "params", "invalid params for notification %s dropped: %s", method, exc
                    )
                    ledger.done(seq)
                    continue
                except Exception:  # noqa: BLE001 (a validator failing: logged with its traceback)
                    log.exception("dispatch", "dispatching %s failed", method)
                    ledger.done(seq)
                    continue
            # Not reset after: this task's context runs nothing else that reads it (the tasks a
            # handler starts copy it as it is when they start).
            set_origin(origin(Origin, (ledger, seq, key)))
            try:
                await function(*args)
            except NotImplementedError:
                log.debug("unimplemented", "notification %s not implemented; ignored", method)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                log.exception(
                    "handler", "notification handler for %s raised CancelledError", method
                )
            except Exception:  # noqa: BLE001 (logged with its traceback)
                log.exception("handler", "notification handler for %s failed", method)
            finally:
                ledger.done(seq)
