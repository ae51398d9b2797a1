"""Remote ACP transport, server side: the timers of one sending task, one per connection each.

Owns ``StallWatch`` and ``Keepalive``. ``StallWatch``: a client that takes nothing of a send for
``max_output_stall`` seconds is cut off (its sending task is cancelled, the caller closes the
connection). An ``asyncio.timeout`` around every frame, or one rescheduled after every frame,
costs a timer handle per frame; under load that was a tenth of the server's CPU. The watch keeps
at most one timer per connection, armed when a batch begins with no timer pending: when it fires
it looks at the time of the last frame sent, and either cuts the client off or re-arms at that
time plus the stall. Marking a frame costs one clock read. ``Keepalive`` wakes an idle SSE
stream's sender once per period without output (a comment keeps proxies from closing it),
instead of a timer per wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class StallWatch:
    """Cancels ``task`` when a batch it is sending makes no progress for ``stall`` seconds."""

    __slots__ = (
        "_task",
        "_stall",
        "_loop",
        "_timer",
        "_busy",
        "_mark",
        "expired",
    )

    def __init__(self, task: asyncio.Task[object], stall: float) -> None:
        self._task = task
        self._stall = stall
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._busy = False
        self._mark = 0.0
        self.expired = False  # the task was cancelled by this watch

    def begin(self) -> None:
        """A batch begins: the stall is measured from now."""
        self._busy = True
        self._mark = self._loop.time()
        if self._timer is None:
            self._timer = self._loop.call_at(self._mark + self._stall, self._check)

    def sent(self) -> None:
        """The client took one more frame (or chunk) of the batch."""
        self._mark = self._loop.time()

    def end(self) -> None:
        """The batch is sent; the timer, if pending, lapses when it fires."""
        self._busy = False

    def stop(self) -> None:
        """No more batches: cancel the timer."""
        self._busy = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if not self._busy or self._task.done():
            return
        due = self._mark + self._stall
        if self._loop.time() >= due:
            self.expired = True
            self._task.cancel()
        else:
            self._timer = self._loop.call_at(due, self._check)

    def swallow(self) -> bool:
        """In the task, on ``CancelledError``: whether this watch caused it (then the cancel is
        taken back and the caller cuts the client off), or it came from elsewhere (re-raise)."""
        if not self.expired:
            return False
        self._task.uncancel()
        return True


class Keepalive:
    """Calls ``wake`` whenever ``period`` seconds pass with nothing ``sent``."""

    __slots__ = (
        "_loop",
        "_wake",
        "_period",
        "_last",
        "_timer",
    )

    def __init__(self, wake: Callable[[], None], period: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = wake
        self._period = period
        self._last = self._loop.time()
        self._timer = self._loop.call_at(self._last + period, self._tick)

    def sent(self) -> None:
        """Something (output or a keep-alive) was just sent."""
        self._last = self._loop.time()

    def stop(self) -> None:
        """Cancel the timer."""
        self._timer.cancel()

    def _tick(self) -> None:
        now = self._loop.time()
        due = self._last + self._period
        if now >= due:
            self._last = now
            due = now + self._period
            self._wake()
        self._timer = self._loop.call_at(due, self._tick)
