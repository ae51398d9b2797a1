"""JSON-RPC 2.0 runtime, the peer leaving: ``PeerGoneError`` and what it means for work in flight.

When the peer leaves (its output ends, it closes our output, the connection is closed), every
request still awaiting its answer fails with ``PeerGoneError``, a ``ConnectionError``. Work an
application started on its own (a turn task that asked permission, say) may then end with that
error while nobody awaits it any more: the handler that would have awaited it was cancelled by
the shutdown. asyncio reports such a task as "Task exception was never retrieved" with a
traceback, although nothing went wrong but the peer leaving. ``quiet_when_peer_gone`` installs,
once per event loop, an exception handler that logs those reports (and only those: the
exception must be a ``PeerGoneError``) at debug level and hands every other report on to the
handler that was there before. Each ``Connection`` installs it when it starts running.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .log import logger

_NEVER_RETRIEVED = "exception was never retrieved"  # asyncio's wording for tasks and futures


class PeerGoneError(ConnectionError):
    """No answer can come: the peer left, or the connection was closed, before answering."""


def quiet_when_peer_gone(loop: asyncio.AbstractEventLoop) -> None:
    """Keep unretrieved ``PeerGoneError``s of ``loop``'s tasks out of the error log (idempotent)."""
    previous = loop.get_exception_handler()
    if getattr(previous, "acp_peer_gone_filter", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), PeerGoneError) and _NEVER_RETRIEVED in str(
            context.get("message", "")
        ):
            logger.debug("work ended because the peer left: %s", context["exception"])
            return
        if previous is None:
            loop.default_exception_handler(context)
        else:
            previous(loop, context)

    handler.acp_peer_gone_filter = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
