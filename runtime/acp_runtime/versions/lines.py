"""Protocol versions on one connection: what the router and the negotiating client share.

Owns the line reader that reads whole lines before a connection exists, the reader that replays
the bytes read so far to the connection that takes over, and the protocol version checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsonrpc import READ_CHUNK, ReaderLike, WriterLike


def supported_text(versions: Mapping[int, object]) -> str:
    """Versions for a message, e.g. ``versions 1, 2`` or ``version 1``."""
    word = "version" if len(versions) == 1 else "versions"
    return f"{word} " + ", ".join(str(v) for v in sorted(versions))


def is_protocol_version(value: Any) -> bool:
    """Whether ``value`` is a valid ACP protocol version (an integer 0..65535)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFF


class LineReader:
    """Reads whole lines from a ``ReaderLike`` and keeps the bytes read past the last one.

    A line longer than ``max_line_bytes`` is returned as ``None`` (once, after it has been
    skipped to its end), so memory stays bounded while nothing is connected yet.
    """

    def __init__(self, reader: ReaderLike, max_line_bytes: int) -> None:
        self.reader = reader
        self.max_line_bytes = max_line_bytes
        self.buffer = bytearray()
        self.eof = False

    async def readline(self) -> bytes | None:
        """The next line without its newline; ``None`` for an oversized one; EOFError at the end."""
        skipping = False
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[: newline + 1]
                return None if skipping or len(line) > self.max_line_bytes else line
            if len(self.buffer) > self.max_line_bytes:
                self.buffer.clear()
                skipping = True
            if self.eof:
                if self.buffer and not skipping:
                    line = bytes(self.buffer)
                    self.buffer.clear()
                    return line
                raise EOFError
            chunk = await self.reader.read(READ_CHUNK)
            if not chunk:
                self.eof = True
            else:
                self.buffer += chunk

    def rest(self, prefix: bytes = b"") -> ReaderLike:
        """A reader that yields ``prefix``, then what was read past the last line, then the rest."""
        return ReplayReader(prefix + bytes(self.buffer), self.reader, eof=self.eof)


class ReplayReader:
    """A ``ReaderLike`` that yields some bytes already read, then reads on from the source."""

    def __init__(self, replay: bytes, source: ReaderLike, *, eof: bool = False) -> None:
        self._replay = replay
        self._source = source
        self._eof = eof

    async def read(self, n: int = -1) -> bytes:
        """Return up to ``n`` bytes, ``b""`` at end of stream."""
        if self._replay:
            size = len(self._replay) if n < 0 else n
            data, self._replay = self._replay[:size], self._replay[size:]
            return data
        if self._eof:
            return b""
        return await self._source.read(n)


async def write_frame(writer: WriterLike, frame: bytes) -> None:
    """Write one frame and wait for the writer to take it."""
    writer.write(frame)
    await writer.drain()
