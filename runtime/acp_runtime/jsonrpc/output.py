"""JSON-RPC 2.0 runtime, output: frames written to the peer, under bounds.

Owns a connection's writer: frames are written whole and in call order; nobody waits for the
transport unless its buffer is above the high-water mark (``_drain_check``). A peer that stops
reading cannot make us buffer without bound nor wait forever: past ``Limits.max_output_bytes``
buffered, or after ``Limits.write_stall_timeout`` without being able to write, and when the peer
closes its end (EPIPE), the output is *lost*: ``on_lost(reason, stalled)`` is called once, and
every later write raises ``ConnectionError`` naming the reason. Closing is bounded by ``close_timeout``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from .framing import WriterLike
from .gone import PeerGoneError
from .limits import Limits
from .log import logger
from .pipes import _drain_check


class Output:
    """The writing half of a connection."""

    def __init__(
        self, writer: WriterLike, limits: Limits, on_lost: Callable[[str, bool], None]
    ) -> None:
        self._writer = writer
        self._limits = limits
        self._on_lost = on_lost
        self._must_drain = _drain_check(writer)
        transport = getattr(writer, "transport", None)
        size = getattr(transport, "get_write_buffer_size", None)
        self._buffered: Callable[[], int] = size if callable(size) else (lambda: 0)
        # Whether the writer reports its buffer (else it is drained after every write).
        self.tells = isinstance(writer, asyncio.StreamWriter) and callable(size)
        self.closed = False
        self.lost: str | None = None
        self._watch: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Watch for the peer closing its end (for writers that can tell: ``wait_closed``)."""
        wait_closed: Callable[[], Awaitable[None]] | None = getattr(
            self._writer, "wait_closed", None
        )
        if wait_closed is not None and self._watch is None:
            self._watch = asyncio.ensure_future(self._watch_closed(wait_closed))

    async def _watch_closed(self, wait_closed: Callable[[], Awaitable[None]]) -> None:
        try:
            await wait_closed()
        except (ConnectionError, OSError, RuntimeError, AttributeError):
            pass
        if not self.closed:
            self.lose("the peer closed its input (our output is gone)", stalled=False)

    def lose(self, reason: str, *, stalled: bool) -> None:
        """Mark the output as lost (once) and tell the connection: ``stalled`` if the peer is
        there but does not read, else it closed its end."""
        if self.lost is None and not self.closed:
            self.lost = reason
            self._on_lost(reason, stalled)

    def _unusable(self) -> ConnectionError:
        if self.lost is not None:
            return PeerGoneError(f"connection closed: {self.lost}")
        return PeerGoneError("connection closed")

    def send(self, frame: bytes) -> None:
        """Write one frame now (raises ``ConnectionError`` once the output is closed or lost)."""
        if self.closed or self.lost is not None:
            raise self._unusable()
        try:
            self._writer.write(frame)
        except (OSError, RuntimeError) as exc:
            self.lose(f"writing failed: {exc}", stalled=False)
            raise self._unusable() from exc
        if self._buffered() > self._limits.max_output_bytes:
            self.lose(
                f"the peer is not reading: over {self._limits.max_output_bytes} bytes of output "
                "are buffered",
                stalled=True,
            )

    def backed_up(self) -> bool:
        """Whether a writer should wait before writing more."""
        return self.tells and not self.closed and self.lost is None and self._must_drain()

    async def drain(self) -> None:
        """Wait while the output is backed up, at most ``write_stall_timeout``."""
        if not self._must_drain() or self.closed:
            return
        if self.lost is not None:
            raise self._unusable()
        try:
            async with asyncio.timeout(self._limits.write_stall_timeout):
                await self._writer.drain()
        except TimeoutError:
            self.lose(
                f"the peer is not reading: no output could be written for "
                f"{self._limits.write_stall_timeout:g} s",
                stalled=True,
            )
            raise self._unusable() from None
        except (ConnectionError, OSError) as exc:
            self.lose(f"writing failed: {exc}", stalled=False)
            raise self._unusable() from exc

    async def close(self, timeout: float) -> None:
        """Close the writer: flush for at most ``timeout`` seconds, then abort the transport."""
        if self.closed:
            return
        self.closed = True  # the watch ends with the writer (cancelling it would cancel the
        # writer's own close waiter, which it awaits)
        transport = getattr(self._writer, "transport", None)
        if self.lost is not None:
            _abort(transport)  # nobody will read what is still buffered
        try:
            self._writer.close()
        except (ConnectionError, OSError, RuntimeError) as exc:
            logger.debug("closing the writer failed: %s", exc)
        wait_closed: Callable[[], Awaitable[None]] | None = getattr(
            self._writer, "wait_closed", None
        )
        if wait_closed is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await wait_closed()
        except TimeoutError:
            logger.warning("output not flushed within %g s: aborted", timeout)
            _abort(transport)
        except (ConnectionError, OSError, RuntimeError, AttributeError) as exc:
            logger.debug("waiting for the writer to close failed: %s", exc)


def _abort(transport: object) -> None:
    if isinstance(transport, asyncio.WriteTransport) and not transport.is_closing():
        transport.abort()
