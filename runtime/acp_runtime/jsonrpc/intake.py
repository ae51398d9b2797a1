"""JSON-RPC 2.0 runtime, intake: the inbound byte stream read and cut into lines, with a pause.

Owns the read loop (``ReadLoop``) and the framing of the bytes it reads (``LineSplitter``):
complete lines go to ``on_line`` one by one,
an oversized line goes to ``on_oversized`` (only its first ``_SNIFF_BYTES`` are kept, the rest is
skipped as it streams in), and between two lines ``paused()`` is asked whether the consumer can
take more. When it cannot, the rest of the chunk is held (at most the one chunk being cut) until
``resume()``: reading pauses instead of queueing without bound, and nothing is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .framing import ReaderLike
from .limits import _SNIFF_BYTES, READ_CHUNK
from .output import Output
from .pipes import _PipeReader


class LineSplitter:
    """Cuts a byte stream into lines under a length limit, pausing on request."""

    __slots__ = ("_buf", "_discarding", "_held", "_limit", "_on_line", "_on_oversized", "_paused")

    def __init__(
        self,
        limit: int,
        on_line: Callable[[bytes | bytearray], None],
        on_oversized: Callable[[bytes], None],
        paused: Callable[[], bool],
    ) -> None:
        self._limit = limit
        self._on_line = on_line
        self._on_oversized = on_oversized
        self._paused = paused
        self._buf = bytearray()  # the start of a line whose end has not arrived yet
        self._discarding = False  # inside an oversized line, already reported
        self._held = b""  # received, not yet cut: the consumer paused

    @property
    def holding(self) -> bool:
        """Whether received bytes wait for ``resume()``."""
        return bool(self._held)

    def feed(self, chunk: bytes) -> None:
        """Cut ``chunk`` (after anything held, to keep the order)."""
        if self._held:
            self._held += chunk
            return
        self._cut(chunk)

    def resume(self) -> None:
        """Cut what was held; it may be held again if the consumer pauses again."""
        held, self._held = self._held, b""
        if held:
            self._cut(held)

    def finish(self) -> None:
        """End of stream: the last line without a trailing newline (call when not holding)."""
        buf, self._buf = self._buf, bytearray()
        if buf and not self._discarding:
            self._emit(buf)

    def _emit(self, line: bytes | bytearray) -> None:
        if len(line) > self._limit:
            self._on_oversized(bytes(line[:_SNIFF_BYTES]))
        else:
            self._on_line(line)

    def _cut(self, chunk: bytes) -> None:
        limit = self._limit
        on_line = self._on_line
        paused = self._paused
        pos = 0
        end = len(chunk)
        while pos < end:
            if paused():
                self._held = chunk[pos:]
                return
            newline = chunk.find(b"\n", pos)
            if newline < 0:
                if not self._discarding:
                    buf = self._buf
                    buf += memoryview(chunk)[pos:]
                    if len(buf) > limit:
                        head = bytes(buf[:_SNIFF_BYTES])
                        self._buf = bytearray()
                        self._discarding = True
                        self._on_oversized(head)
                return
            if self._discarding:
                self._discarding = False
            elif self._buf:
                line = self._buf
                line += memoryview(chunk)[pos:newline]
                self._buf = bytearray()
                self._emit(line)
            elif newline - pos > limit:
                self._on_oversized(chunk[pos : pos + _SNIFF_BYTES])
            else:
                on_line(chunk[pos:newline])
            pos = newline + 1


class ReadLoop:
    """Reads a connection's input into its ``LineSplitter`` until end of input, pausing while
    ``must_pause()`` says so (it is re-asked on every ``progress()``)."""

    def __init__(
        self,
        reader: ReaderLike,
        intake: LineSplitter,
        output: Output,
        must_pause: Callable[[], bool],
    ) -> None:
        self._reader = reader
        self._intake = intake
        self._output = output
        self._must_pause = must_pause
        self._wake: asyncio.Future[None] | None = None
        self.reading = False
        """False before the loop runs and once the connection stops reading."""

    def progress(self) -> None:
        """Something that may end a pause happened (a handler finished, a request ended...)."""
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def catch_up(self) -> None:
        """Wait until intake may go on, feeding it what it held meanwhile."""
        while self.reading:
            if self._output.answers_backed_up():
                await self._output.drain()
            elif self._must_pause():
                self._wake = asyncio.get_running_loop().create_future()
                try:
                    await self._wake
                finally:
                    self._wake = None
            elif self._intake.holding:
                self._intake.resume()
            else:
                return

    def _blocked(self) -> bool:
        return self._intake.holding or self._must_pause()

    async def run(self) -> None:
        """Read to the end of input (the last line without a newline included)."""
        reader, output, feed = self._reader, self._output, self._intake.feed

        def take(chunk: bytes) -> None:
            output.input_since_write = True  # our next frame may answer it: written at once
            feed(chunk)

        if isinstance(reader, _PipeReader):
            # Chunks are handed over straight from the transport's callback (no task hop).
            await reader.attach(take, self._blocked, self.catch_up)
        else:
            while True:
                chunk = await reader.read(READ_CHUNK)
                if not chunk:
                    break
                take(chunk)
                await self.catch_up()
                if not self._output.tells:
                    await self._output.drain()  # our answers to that chunk
        await self.catch_up()  # what was held when the input ended
        if self.reading:
            self._intake.finish()
