"""Remote ACP transport, server side: a rate limit on log records a peer can cause at will.

A flood of bad frames, of sockets past the open-file limit or of refused connections must not
turn each into a log line: at tens of thousands a second they fill disks and, written to a pipe
nobody reads, block the process. ``RateLimit`` lets ``BURST`` records of one kind (logger and
message template) through per ``WINDOW`` seconds and notes on the next one let through how many
it held back. ``rate_limit_loggers`` installs it on named loggers (once each).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Final

BURST: Final = 10
WINDOW: Final = 10.0
_MAX_KINDS: Final = 256  # templates are few; a flood of distinct ones only resets the table


class RateLimit(logging.Filter):
    """At most ``burst`` records per kind (logger name and message template) per ``window`` s."""

    def __init__(self, burst: int = BURST, window: float = WINDOW) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        # kind -> [window start, records let through, records held back]
        self._windows: dict[tuple[str, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is logged (it may gain a note of how many were held back)."""
        kind = (record.name, str(record.msg))
        now = time.monotonic()
        window = self._windows.get(kind)
        if window is None or now - window[0] >= self.window:
            held = int(window[2]) if window is not None else 0
            if window is None and len(self._windows) >= _MAX_KINDS:
                self._windows.clear()
            window = self._windows[kind] = [now, 0.0, 0.0]
            if held:
                record.msg = f"{record.msg} ({held} more like this were not logged)"
        if window[1] >= self.burst:
            window[2] += 1
            return False
        window[1] += 1
        return True


def rate_limit_loggers(names: Iterable[str]) -> None:
    """Install a ``RateLimit`` on each named logger that has none yet."""
    for name in names:
        target = logging.getLogger(name)
        if not any(isinstance(f, RateLimit) for f in target.filters):
            target.addFilter(RateLimit())


# Our own logger: what the HTTP and WebSocket handlers log is mostly caused by peers.
rate_limit_loggers(["acp_runtime.remote"])
