"""Remote ACP transport, client side: reading what an agent sends, under ``ClientLimits``.

Owns ``ClientLimitError`` and the three bounded reads of an ``httpx`` response: a whole body
(``read_body``: over the limit is an error, read no further), the start of an error body
(``read_start``: the rest is never read) and the data of each Server-Sent Event (``sse_data``,
an incremental parser of the ``text/event-stream`` format whose line and event sizes are
bounded, unlike a line decoder that buffers a line with no end). Bytes are counted after
content decoding: a compressed body cannot expand past a limit either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pydantic_core


class ClientLimitError(ConnectionError):
    """What an agent sent is over one of the client's limits (``ClientLimits``)."""

    def __init__(self, what: str, field: str) -> None:
        self.field = field
        super().__init__(f"{what} (ClientLimits.{field}): refused")

    @classmethod
    def over(cls, what: str, limit: int) -> ClientLimitError:
        """``what`` is longer than ``ClientLimits.max_message_bytes`` (``limit``)."""
        return cls(f"{what} is over {limit} bytes", "max_message_bytes")

    def to_rpc_error(self, request_id: Any) -> bytes:
        """The JSON-RPC error frame that fails the request this concerned."""
        error = {"code": -32603, "message": str(self), "data": {"limit": self.field}}
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "error": error}) + b"\n"


def _declared(response: Any) -> int | None:
    value = response.headers.get("content-length")
    return int(value) if value is not None and value.isdigit() else None


async def read_body(response: Any, limit: int, what: str) -> bytes:
    """The whole body of ``response``; ``ClientLimitError`` as soon as it passes ``limit``."""
    declared = _declared(response)
    if declared is not None and declared > limit:
        raise ClientLimitError.over(what, limit)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        if len(body) + len(chunk) > limit:
            raise ClientLimitError.over(what, limit)
        body += chunk
    return bytes(body)


async def read_start(response: Any, limit: int) -> bytes:
    """At most the first ``limit`` bytes of the body (the rest is left unread)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


async def sse_data(response: Any, limit: int) -> AsyncIterator[bytes]:
    """The data of each event of an event stream (``data:`` lines joined by newlines; events
    with no data, comments and other fields skipped). A line or an event's data longer than
    ``limit`` is a ``ClientLimitError``: nothing past it is read."""
    buffer = bytearray()
    scanned = 0  # the part of `buffer` known to hold no line end
    data: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while True:
            end = _line_end(buffer, scanned)
            if end is None:
                scanned = len(buffer) - buffer.endswith(b"\r")  # a CR last is looked at again
                if scanned > limit:
                    raise ClientLimitError.over("an SSE line", limit)
                break
            start, after = end
            line = bytes(buffer[:start])
            del buffer[:after]
            scanned = 0
            if len(line) > limit:
                raise ClientLimitError.over("an SSE line", limit)
            if not line:  # end of the event
                if data:
                    yield b"\n".join(data)
                data, size = [], 0
                continue
            name, _, value = line.partition(b":")
            if name == b"data":
                value = value[1:] if value.startswith(b" ") else value
                size += len(value) + 1
                if size > limit:
                    raise ClientLimitError.over("an SSE event", limit)
                data.append(value)


def _line_end(buffer: bytearray, start: int) -> tuple[int, int] | None:
    """Where the first line of ``buffer`` ends (CR, LF or CRLF), searching from ``start``: the
    end of its text and the start of the next line. None while it may go on (a CR last)."""
    lf = buffer.find(b"\n", start)
    cr = buffer.find(b"\r", start, lf if lf >= 0 else len(buffer))
    if cr < 0:
        return None if lf < 0 else (lf, lf + 1)
    if cr + 1 == len(buffer):
        return None  # a CR last: an LF may follow in the next chunk
    return (cr, cr + 2) if buffer[cr + 1] == 0x0A else (cr, cr + 1)
