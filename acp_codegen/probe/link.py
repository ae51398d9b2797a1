"""The probe's end of one connection: raw JSON lines over asyncio streams, every line recorded
(to an optional transcript file and straight into the conformance checker) as it passes.

The probe plays one side (`me`); the peer is the other. Lines the peer sends are parsed with the
transcript reader's bounded `loads`, so garbage becomes an `Unreadable` item (a finding), never an
exception. Responses to the probe's requests resolve futures; the peer's requests and
notifications wait in a queue for the script. Lines the probe sends that break a rule on purpose
(an unknown method, a malformed line, a response to an id never used) are recorded as
`deliberate`, so the rules do not report them against the probe.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from pathlib import Path
from typing import IO, Any, cast

from acp_codegen.transcript.conformance import Conformance
from acp_codegen.transcript.read import Entry, Sender, Unreadable, loads

MAX_LINE = 64 * 1024 * 1024


class PeerGone(Exception):
    """The peer closed the connection or did not answer in time."""


class Link:
    """One recorded, checked connection to a peer process."""

    def __init__(
        self,
        me: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter | Any,
        conformance: Conformance,
        transcript: IO[str] | None,
        timeout: float,
    ) -> None:
        self.me, self.peer = me, "agent" if me == "client" else "client"
        self.reader, self.writer = reader, writer
        self.conformance, self.transcript, self.timeout = conformance, transcript, timeout
        self.line = 0
        self.ids = itertools.count(0)
        self.last_id = -1
        self.waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.closed = False
        self._pump: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start reading the peer's lines."""
        self._pump = asyncio.get_running_loop().create_task(self._read())

    def _record(
        self, sender: str, message: dict[str, Any] | None, raw: str | None, deliberate: bool
    ) -> None:
        self.line += 1
        side = cast(Sender, sender)  # `me` or `peer`: "client" or "agent"
        if message is not None:
            self.conformance.add(Entry(self.line, side, message, deliberate))
        else:
            text = f"not a JSON-RPC message: {(raw or '')[:60]!r}"
            self.conformance.add(Unreadable(self.line, side, text, deliberate))
        if self.transcript is not None:
            item: dict[str, Any] = (
                {"from": sender, "message": message}
                if message is not None
                else {"from": sender, "raw": raw}
            )
            if deliberate:
                item["deliberate"] = True
            self.transcript.write(json.dumps(item, ensure_ascii=False) + "\n")

    async def _read(self) -> None:
        try:
            while True:
                try:
                    raw = await self.reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as eof:
                    raw = eof.partial
                    if not raw.strip():
                        break
                except asyncio.LimitOverrunError:
                    await self._skip_long_line()
                    continue
                if raw.strip():
                    self._received(raw)
        except (ConnectionError, OSError):
            pass
        finally:
            self.closed = True
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(PeerGone("the peer closed the connection"))
            self.inbox.put_nowait(None)

    def _reply_parse_error(self) -> None:
        """What the probe expects of its peer, it does itself: an error reply to a malformed
        line."""
        reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        asyncio.get_running_loop().create_task(self._quietly(reply))

    async def _quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(PeerGone):
            await self.send(message)

    async def _skip_long_line(self) -> None:
        while True:
            try:
                await self.reader.readuntil(b"\n")
                break
            except asyncio.LimitOverrunError as error:
                await self.reader.readexactly(error.consumed)
        self._record(self.peer, None, f"(a line over {MAX_LINE} bytes)", False)
        self._reply_parse_error()

    def _received(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        try:
            message = loads(text)
        except ValueError as error:
            self._record(self.peer, None, f"{text[:200]} ({error})", False)
            self._reply_parse_error()
            return
        if not isinstance(message, dict):
            self._record(self.peer, None, text[:200], False)
            self._reply_parse_error()
            return
        self._record(self.peer, message, None, False)
        if "method" not in message and message.get("id") in self.waiting:
            future = self.waiting.pop(message["id"])
            if not future.done():
                future.set_result(message)
        elif "method" in message:
            self.inbox.put_nowait(message)

    async def send(self, message: dict[str, Any], *, deliberate: bool = False) -> None:
        """Send and record one message."""
        self._record(self.me, message, None, deliberate)
        await self._write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    async def send_raw(self, text: str) -> None:
        """Send a line that is not a JSON-RPC message (recorded as deliberate)."""
        self._record(self.me, None, text, True)
        await self._write(text.encode("utf-8") + b"\n")

    async def _write(self, data: bytes) -> None:
        if self.closed:
            raise PeerGone("the peer closed the connection")
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionError, OSError) as error:
            raise PeerGone(f"writing to the peer failed: {error}") from None

    async def send_request(
        self, method: str, params: Any, *, deliberate: bool = False
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Send a request; its id and the future of its response (not awaited)."""
        request_id = self.last_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
            deliberate=deliberate,
        )
        return request_id, future

    async def request(
        self, method: str, params: Any, *, deliberate: bool = False, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its response (`PeerGone` on timeout or close)."""
        request_id, future = await self.send_request(method, params, deliberate=deliberate)
        try:
            return await asyncio.wait_for(future, timeout or self.timeout)
        except TimeoutError:
            self.waiting.pop(request_id, None)
            raise PeerGone(f"no response to {method} within {timeout or self.timeout:g}s") from None

    async def notify(self, method: str, params: Any, *, deliberate: bool = False) -> None:
        """Send a notification."""
        await self.send(
            {"jsonrpc": "2.0", "method": method, "params": params}, deliberate=deliberate
        )

    async def respond(
        self, request: dict[str, Any], result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        """Answer one of the peer's requests."""
        body = {"error": error} if error is not None else {"result": result}
        await self.send({"jsonrpc": "2.0", "id": request.get("id"), **body})

    async def next_message(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The peer's next request or notification (None when it closed; `PeerGone` on timeout)."""
        # asyncio.timeout, not wait_for: on 3.11 a wait_for cancelled just after its inner get
        # finished swallows the cancel and hands the message to a caller that gave up waiting, so
        # a request the peer sent would never be answered
        try:
            async with asyncio.timeout(timeout or self.timeout):
                return await self.inbox.get()
        except TimeoutError:
            raise PeerGone(f"nothing from the peer within {timeout or self.timeout:g}s") from None

    def queued(self) -> list[dict[str, Any]]:
        """The peer's requests and notifications already received, taken without waiting."""
        messages: list[dict[str, Any]] = []
        while not self.inbox.empty():
            message = self.inbox.get_nowait()
            if message is None:  # the close marker stays for whoever waits next
                self.inbox.put_nowait(None)
                break
            messages.append(message)
        return messages

    async def stop(self) -> None:
        """Stop reading."""
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, PeerGone):
                await self._pump


def open_transcript(path: Path | None) -> IO[str] | None:
    """The transcript file to record into, if asked for (line-buffered text)."""
    return path.open("w", encoding="utf-8", buffering=1) if path is not None else None
