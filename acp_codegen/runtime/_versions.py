"""Protocol versions on one connection: what the router and the negotiating client share.

Owns the common interface a generated package offers to code that spans packages (each package
carries its own copy of the runtime, so nothing here may rely on one package's classes): the
*binding* of a handler (the package module holding its method tables, its peer class and its
``Connection``), found from the handler's class; the line reader that reads whole lines before a
connection exists; and the reader that replays the bytes read so far to the connection that
takes over.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Protocol

from ._rpc_framing import ReaderLike, WriterLike
from ._rpc_limits import _READ_CHUNK


class Binding(Protocol):
    """What a generated package's ``dispatch`` module offers (a module object fits)."""

    AGENT_METHODS: Mapping[str, Any]
    CLIENT_METHODS: Mapping[str, Any]
    Connection: Any
    ClientPeer: Any
    AgentPeer: Any


_BINDING_NAMES = ("AGENT_METHODS", "CLIENT_METHODS", "Connection", "ClientPeer", "AgentPeer")


def binding_of(handler: object) -> Binding:
    """The generated package a handler (an ``Agent`` or ``Client`` subclass instance) belongs to."""
    for cls in type(handler).__mro__:
        module = sys.modules.get(cls.__module__)
        if module is not None and all(hasattr(module, name) for name in _BINDING_NAMES):
            found: Binding = module
            return found
    raise TypeError(
        f"{type(handler).__qualname__} is not a handler of a generated ACP package "
        "(subclass the package's Agent or Client)"
    )


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
            chunk = await self.reader.read(_READ_CHUNK)
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
