"""A hostile ACP agent over Streamable HTTP, for the client's limits (issue 32, requirement 4).

A minimal HTTP/1.1 server on a real 127.0.0.1 socket (raw asyncio, not our ASGI app: a hostile
agent does not follow the profile) whose ``Scenario`` decides every answer: bodies with no end
(chunked), error bodies with no end, an event stream whose line never ends, responses naming
a new session each. It records the requests it sees and the session streams open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

CHUNK = b"x" * 65536
INIT_RESULT = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}'


@dataclass
class Scenario:
    """What the agent does. ``initialize``: "ok", "endless" (200, a body with no end),
    "declared" (200, Content-Length of 1 GB), "error" (500, an error body with no end),
    "escapes" (500, an error body of terminal escape sequences and a line break), "silent" (never
    answers).
    ``stream``: "quiet" (an event stream that sends nothing) or "endless-line". ``sessions``:
    how many responses naming a new session the connection stream sends after the answer to
    the first request posted after initialize."""

    initialize: str = "ok"
    stream: str = "quiet"
    sessions: int = 0
    posted: list[dict[str, Any]] = field(default_factory=list)
    session_gets: list[str] = field(default_factory=list)
    open_session_streams: int = 0
    most_session_streams: int = 0
    sent_bytes: int = 0
    _connection_stream: asyncio.Queue[bytes] = field(default_factory=asyncio.Queue)


async def _request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method = lines[0].split(" ")[0]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, headers, body


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _endless(writer: asyncio.StreamWriter, scenario: Scenario, chunk: bytes) -> None:
    """Chunked data with no end, until the client hangs up."""
    with contextlib.suppress(ConnectionError, OSError):
        while True:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            scenario.sent_bytes += len(chunk)
            await writer.drain()


async def _serve(
    scenario: Scenario, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    chunked = {"Transfer-Encoding": "chunked"}
    try:
        while (request := await _request(reader)) is not None:
            method, headers, body = request
            if method == "POST":
                message = json.loads(body)
                scenario.posted.append(message)
                if message.get("method") == "initialize":
                    ids = {"Acp-Connection-Id": "c1", "Content-Type": "application/json"}
                    if scenario.initialize == "silent":
                        await reader.read()  # never answers; until the client hangs up
                        return
                    if scenario.initialize == "ok":
                        writer.write(_head(200, {**ids, "Content-Length": str(len(INIT_RESULT))}))
                        writer.write(INIT_RESULT)
                    elif scenario.initialize == "declared":
                        writer.write(_head(200, {**ids, "Content-Length": str(1 << 30)}))
                        await _endless(writer, scenario, CHUNK)  # not chunked: raw bytes
                        return
                    elif scenario.initialize == "endless":
                        writer.write(_head(200, {**ids, **chunked}))
                        await _endless(writer, scenario, b'{"jsonrpc":"2.0","id":0,"result":"')
                        return
                    elif scenario.initialize == "escapes":
                        body = b"\x1b]52;c;aGk=\x07\nFAKE LINE\x1b[2J"
                        writer.write(_head(500, {"Content-Length": str(len(body))}) + body)
                    else:
                        writer.write(_head(500, {"Content-Type": "text/plain", **chunked}))
                        await _endless(writer, scenario, b"error " * 10000)
                        return
                else:
                    writer.write(_head(202, {"Content-Length": "0"}))
                    if "id" in message and "method" in message:
                        await _answer(scenario, message)
                await writer.drain()
            elif method == "GET":
                await _stream(scenario, headers, reader, writer)
                return
            else:
                writer.write(_head(202, {"Content-Length": "0"}))
                await writer.drain()
    except (ConnectionError, OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _answer(scenario: Scenario, message: dict[str, Any]) -> None:
    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"ok": True}}
    await scenario._connection_stream.put(json.dumps(answer).encode())
    for i in range(scenario.sessions):
        named = {"jsonrpc": "2.0", "id": 10_000 + i, "result": {"sessionId": f"s{i}"}}
        await scenario._connection_stream.put(json.dumps(named).encode())
    scenario.sessions = 0
    await scenario._connection_stream.put(json.dumps({**answer, "id": "sync"}).encode())


async def _stream(
    scenario: Scenario,
    headers: dict[str, str],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    writer.write(_head(200, {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"}))
    session = headers.get("acp-session-id")
    gone = asyncio.ensure_future(reader.read())  # b"" when the client hangs up
    gone.add_done_callback(lambda task: task.cancelled() or task.exception())  # a reset: retrieved
    if session is not None:
        scenario.session_gets.append(session)
        scenario.open_session_streams += 1
        scenario.most_session_streams = max(
            scenario.most_session_streams, scenario.open_session_streams
        )
        try:
            with contextlib.suppress(ConnectionError):
                await gone
        finally:
            scenario.open_session_streams -= 1
        return
    if scenario.stream == "endless-line":
        await _endless(writer, scenario, b"data: " + CHUNK)
        return
    try:
        while not gone.done():
            data = await scenario._connection_stream.get()
            event = b"data: " + data + b"\n\n"
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
    finally:
        gone.cancel()


@asynccontextmanager
async def hostile_agent(scenario: Scenario) -> AsyncIterator[str]:
    """Serve ``scenario`` on 127.0.0.1: the endpoint URL."""
    tasks: set[asyncio.Task[None]] = set()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(_serve(scenario, reader, writer))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
