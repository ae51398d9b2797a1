"""JSON-RPC 2.0 runtime, output: frames written to the peer, under bounds.

Owns a connection's writer: frames are written whole and in call order; nobody waits for the
transport unless its buffer is above the high-water mark (``_drain_check``). A slow reader is told
from a peer that stopped reading by the rate at which it drains our output, not by how much is
buffered: while output waits in the transport, the peer must take at least
``Limits.min_drain_rate`` bytes a second over every ``Limits.write_stall_timeout`` window
(``DrainWatch``). A peer below that rate, and a peer that closes its end (EPIPE), makes the output
*lost*: ``on_lost(reason, stalled)`` is called once, every wait for the transport ends at once and
every later write raises ``ConnectionError`` naming the reason. Writers that can wait (our
requests and notifications) wait while more than ``Limits.max_output_bytes`` is buffered, so
concurrent large frames to a reading peer are all delivered. ``release`` (the connection is
closing) ends every wait at once; closing is bounded by ``close_timeout``.

Bursts are written together. The first frame after input arrived (an answer, the next request
of a conversation) is written at once; a frame with no input since the previous write (a flood
of notifications, the second answer to one chunk of requests) is held and written with the rest
of its burst when the event loop next turns, or once ``CORK_BYTES`` are held. One write instead
of one per frame saves a system call per message and, where the peer shares the CPU, a wake-up
of the peer per message; a round trip is never delayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import cast

from .framing import WriterLike
from .gone import PeerGoneError
from .limits import Limits
from .log import logger
from .loop import LoopRef
from .pipes import _drain_check

CORK_BYTES: int = 16 * 1024
"""Bytes held at most before they are written (a burst that never lets the loop turn)."""


class DrainWatch:
    """Measures how fast the peer drains the transport's buffer while it is not empty."""

    def __init__(self, output: Output, limits: Limits) -> None:
        self._output = output
        self._window = limits.write_stall_timeout
        self._rate = limits.min_drain_rate
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Watch from now until the buffer is empty again (one task per backed-up stretch)."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._watch())

    def stop(self) -> None:
        """Stop watching (the output is closed or lost)."""
        task = self._task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()  # (the watch itself, when it finds the peer stalled, just returns)

    async def _watch(self) -> None:
        output, window = self._output, self._window
        step = max(window / 10, 0.01)
        # (time, bytes drained so far) samples of the current stretch with output waiting.
        samples = deque([(time.monotonic(), output.drained())])
        while output.usable() and output.buffered() > 0:
            await asyncio.sleep(step)
            if not output.usable():
                return
            now, drained = time.monotonic(), output.drained()
            if output.buffered() == 0:
                return  # the peer took everything: the next backed-up stretch starts afresh
            samples.append((now, drained))
            while len(samples) > 1 and samples[1][0] <= now - window:
                samples.popleft()  # keep the newest sample at least one window old
            since, before = samples[0]
            if now - since >= window and drained - before < self._rate * window:
                output.lose(
                    f"the peer is not reading: it took {drained - before} bytes of our output in "
                    f"{window:g} s (under {self._rate} bytes/s) with {output.buffered()} bytes "
                    "waiting",
                    stalled=True,
                )
                return


class Output:
    """The writing half of a connection."""

    def __init__(
        self,
        writer: WriterLike,
        limits: Limits,
        on_lost: Callable[[str, bool], None],
        loop: LoopRef,
    ) -> None:
        self._writer = writer
        self._loop = loop
        self._limits = limits
        self._on_lost = on_lost
        self._must_drain = _drain_check(writer)
        transport = getattr(writer, "transport", None)
        size = getattr(transport, "get_write_buffer_size", None)
        self.buffered: Callable[[], int] = size if callable(size) else (lambda: 0)
        # Whether the writer reports its buffer (else it is drained after every write).
        self.tells = isinstance(writer, asyncio.StreamWriter) and callable(size)
        # A writer that cuts a stalled peer off itself (`bounds_stalls = True`: the remote
        # transports' sinks) is drained without a timer of ours around each drain.
        self._bounds_stalls = getattr(writer, "bounds_stalls", False) is True
        self.closed = False
        self.lost: str | None = None
        self._released: ConnectionError | None = None
        self._wake = asyncio.Event()  # set once waiting for the transport is pointless
        self._written = 0
        self._answers_end = 0  # where the last answer to the peer ends in what we wrote
        self.answers_unread = False
        """Whether an answer may still be in the transport's buffer (false once the peer has
        taken up to `_answers_end`: what it took only grows, so until the next answer)."""
        self._drain_watch = DrainWatch(self, limits)
        self._watch: asyncio.Task[None] | None = None
        self.input_since_write = True
        """Whether input arrived since the last write (set by the reading side): the next
        frame is then written at once, else it is held for its burst's write."""
        self._held: list[bytes] | None = None  # a burst's frames, written by `flush`
        self._held_bytes = 0

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

    def drained(self) -> int:
        """Bytes the peer has taken so far (written by us and no longer buffered)."""
        return self._written - self.buffered()

    def usable(self) -> bool:
        """Whether frames can still be written."""
        return not self.closed and self.lost is None

    def lose(self, reason: str, *, stalled: bool) -> None:
        """Mark the output as lost (once) and tell the connection: ``stalled`` if the peer is
        there but does not read, else it closed its end."""
        if self.lost is None and not self.closed:
            self.lost = reason
            self._wake.set()
            self._drain_watch.stop()
            self._on_lost(reason, stalled)

    def release(self, error: ConnectionError) -> None:
        """The connection is closing: every wait for the transport ends now with ``error``
        (frames can still be written until ``close``: the answers of cancelled requests)."""
        if self._released is None:
            self._released = error
            self._wake.set()

    def _unusable(self) -> ConnectionError:
        if self.lost is not None:
            return PeerGoneError(f"connection closed: {self.lost}")
        if self._released is not None:
            return self._released
        return PeerGoneError("connection closed")

    def send(self, frame: bytes, *, answer: bool = False) -> None:
        """Write one frame, now or with the rest of its burst before the event loop next
        waits (raises ``ConnectionError`` once the output is closed or lost); ``answer``: it
        answers the peer (see ``answers_backed_up``)."""
        if self.closed or self.lost is not None:  # `usable()`, inlined
            raise self._unusable()
        held = self._held
        if held is None and self.tells:
            if self.input_since_write:
                self.input_since_write = False
            else:
                held = self._held = []
                self._loop().call_soon(self.flush)
        if held is None:
            self._write(frame)
        else:
            held.append(frame)
            self._held_bytes += len(frame)
        if answer:  # (nothing is held when the frame was written: `_held_bytes` is 0)
            self._answers_end = self._written + self._held_bytes
            self.answers_unread = True
        if self._held_bytes >= CORK_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the frames a burst holds, if any (a failure loses the output, as in ``send``,
        without raising: nobody waits on the burst)."""
        held = self._held
        if held is None:
            return
        self._held = None
        self._held_bytes = 0
        if self.lost is not None:
            return  # nobody to write to
        with contextlib.suppress(ConnectionError):
            self._write(held[0] if len(held) == 1 else b"".join(held))

    def _write(self, data: bytes) -> None:
        """Write ``data`` to the writer now; a failure loses the output and raises."""
        try:
            self._writer.write(data)
        except (OSError, RuntimeError) as exc:
            self.lose(f"writing failed: {exc}", stalled=False)
            raise self._unusable() from exc
        self._written += len(data)
        if self.tells and self.buffered() > 0:
            self._drain_watch.start()

    def backed_up(self) -> bool:
        """Whether a writer should wait before writing more."""
        return self.tells and self.usable() and self._must_drain()

    def answers_backed_up(self) -> bool:
        """Whether reading must wait for the peer to take our answers: the output is backed up
        and still holds some. Output backed up with our own requests only does not stop
        reading: the peer's answers to them are what lets it read on (else both ends would
        wait for each other)."""
        # The cheap test first: after every answer was taken (a flood of notifications to us),
        # one attribute tells; then one look at the transport's buffer size.
        if not self.answers_unread:
            return False
        if not self.tells or self.drained() >= self._answers_end:
            self.answers_unread = False
            return False
        return self.backed_up()

    def full(self) -> bool:
        """Whether a writer must wait in ``room()`` (asked first: most of the time it need not,
        and a coroutine a message is not free)."""
        return self.tells and self.buffered() > self._limits.max_output_bytes

    def must_drain(self) -> bool:
        """Whether ``drain()`` would wait (asked first, as ``full``)."""
        return self._must_drain() and not self.closed

    async def room(self) -> None:
        """Wait (before writing) while more than ``Limits.max_output_bytes`` is buffered."""
        while self.tells and self.buffered() > self._limits.max_output_bytes:
            await self.drain()

    async def drain(self) -> None:
        """Wait while the output is backed up: until the peer takes it, the output is lost
        (``DrainWatch``) or ``release``d."""
        if not self._must_drain() or self.closed:
            return
        if self.lost is not None or self._released is not None:
            raise self._unusable()
        if not self.tells:
            await self._drain_blind()
            return
        self._drain_watch.start()
        drain = asyncio.ensure_future(self._writer.drain())
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait([drain, woken], return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not drain.done():
                drain.cancel()
        if not drain.done() or drain.cancelled():
            raise self._unusable()
        exc = drain.exception()
        if isinstance(exc, (ConnectionError, OSError)):
            self.lose(f"writing failed: {exc}", stalled=False)
            raise self._unusable() from exc
        if exc is not None:
            raise exc

    async def _drain_blind(self) -> None:
        # A writer that does not report its buffer: each drain may take `write_stall_timeout`,
        # unless the writer bounds its stalls itself (a timer per message was 12-21 % of the
        # remote server's CPU: the drain returns at once when there is room).
        try:
            if self._bounds_stalls:
                await self._writer.drain()
                return
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
        self.flush()
        self.closed = True  # the watch ends with the writer (cancelling it would cancel the
        # writer's own close waiter, which it awaits)
        self._wake.set()
        self._drain_watch.stop()
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
    # A transport that is closing but still holds output has not reported its end yet (a
    # closing one with an empty buffer has, or will at once: aborting it again would report twice).
    # Duck-typed: uvloop's transports have these methods but are not asyncio.WriteTransport's.
    if not all(hasattr(transport, m) for m in ("abort", "is_closing", "get_write_buffer_size")):
        return
    write = cast(asyncio.WriteTransport, transport)
    if not write.is_closing() or write.get_write_buffer_size() > 0:
        write.abort()
