"""JSON-RPC 2.0 runtime, logging: the runtime's logger and a rate limit on what a peer can cause.

A peer that floods malformed lines, unknown-id responses or stray cancellations must not turn
each into a log line: a handler writing to a stderr pipe nobody reads blocks the whole process
once the pipe is full. ``PeerLog`` lets ``_LOG_BURST`` lines per kind through per
``_LOG_WINDOW`` seconds and reports how many it held back when the next window opens.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from .limits import _LOG_BURST, _LOG_WINDOW

# Named after the facade module: one logger for the whole runtime.
logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.jsonrpc


class PeerLog:
    """Rate-limited logging of events a peer can repeat at will (per connection, per kind)."""

    __slots__ = ("_windows",)

    def __init__(self) -> None:
        # kind -> [window start, lines logged in it, lines held back in it]
        self._windows: dict[str, list[float]] = {}

    def log(self, level: int, kind: str, message: str, *args: Any, exc_info: Any = None) -> None:
        """Log ``message`` unless ``kind`` already used up its lines of the current window."""
        if not logger.isEnabledFor(level):
            return
        now = time.monotonic()
        window = self._windows.get(kind)
        if window is None or now - window[0] >= _LOG_WINDOW:
            if window is not None and window[2]:
                logger.log(level, "%d more %s messages were not logged", int(window[2]), kind)
            if window is None and len(self._windows) >= 64:  # kinds are few; stay bounded
                self._windows.clear()
            window = self._windows[kind] = [now, 0.0, 0.0]
        if window[1] >= _LOG_BURST:
            window[2] += 1
            return
        window[1] += 1
        logger.log(level, message, *args, exc_info=exc_info)

    def warning(self, kind: str, message: str, *args: Any) -> None:
        """Rate-limited ``logger.warning``."""
        self.log(logging.WARNING, kind, message, *args)

    def debug(self, kind: str, message: str, *args: Any) -> None:
        """Rate-limited ``logger.debug``."""
        self.log(logging.DEBUG, kind, message, *args)

    def exception(self, kind: str, message: str, *args: Any) -> None:
        """Rate-limited ``logger.exception`` (inside an ``except`` block)."""
        self.log(logging.ERROR, kind, message, *args, exc_info=True)
