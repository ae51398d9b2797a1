"""JSON-RPC 2.0 runtime, the event loop: asked for once per connection.

``asyncio.get_running_loop()``, and what calls it (``asyncio.create_task``,
``asyncio.current_task()`` without a loop), makes a ``getpid`` system call each time on CPython
3.11 (the loop of a parent process must not be used by a forked child): three per request round
trip. A connection lives on one event loop, so its parts share one ``LoopRef`` that asks once.
"""

from __future__ import annotations

import asyncio


class LoopRef:
    """The running event loop, asked for at the first call and kept."""

    __slots__ = ("_loop",)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self) -> asyncio.AbstractEventLoop:
        """The loop (asked for now if this is the first call: there must be one running)."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop
