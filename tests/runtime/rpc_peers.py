"""Fixtures-as-functions for the runtime tests: a served connection with a raw peer, and pairs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from rpc_testkit import (
    TIMEOUT,
    EchoClient,
    EchoServer,
    build_server,
    client_table,
    load_runtime,
    pipe,
)

rpc = load_runtime()


class RawPeer:
    """The far end of a connection, speaking bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.next_id = 1000

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send_json(self, message: Any) -> None:
        await self.send(json.dumps(message).encode() + b"\n")

    async def recv_line(self, timeout: float = TIMEOUT) -> bytes:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line.endswith(b"\n"), line
        return line

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message = json.loads(await self.recv_line(timeout))
        assert isinstance(message, dict)
        return message

    async def expect_silence(self, delay: float = 0.05) -> None:
        with pytest.raises(TimeoutError):
            line = await asyncio.wait_for(self.reader.readline(), delay)
            pytest.fail(f"unexpected message {line!r}")

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send_json(message)
        reply = await self.recv()
        assert reply["id"] == self.next_id, reply
        return reply

    async def assert_alive(self) -> None:
        reply = await self.call("echo", {"text": "alive"})
        assert reply == {"jsonrpc": "2.0", "id": self.next_id, "result": {"text": "alive"}}


@dataclass
class Served:
    connection: Any
    handler: EchoServer
    raw: RawPeer
    run_task: asyncio.Task[None]


@asynccontextmanager
async def served(
    max_line_bytes: int = 1 << 20,
    handler: Any = None,
    table: dict[str, Any] | None = None,
    inbound_pipe: Callable[[], Awaitable[tuple[Any, asyncio.StreamWriter]]] | None = None,
) -> AsyncIterator[Served]:
    """A Connection serving the echo table (or `table`), driven by a raw peer over two OS pipes;
    `inbound_pipe` makes the pipe the connection reads from (default: a stream reader)."""
    inbound_reader, inbound_writer = await (inbound_pipe or pipe)()
    outbound_reader, outbound_writer = await pipe()
    echo, echo_table = build_server(rpc)
    handler = echo if handler is None else handler
    connection = rpc.Connection(
        handler, table or echo_table, inbound_reader, outbound_writer, max_line_bytes=max_line_bytes
    )
    if isinstance(handler, EchoServer):
        handler.connection = connection
    run_task = asyncio.create_task(connection.run())
    try:
        yield Served(connection, handler, RawPeer(outbound_reader, inbound_writer), run_task)
    finally:
        inbound_writer.close()
        await connection.close()
        await asyncio.wait_for(run_task, TIMEOUT)


@dataclass
class Pair:
    client: Any
    server: Any
    handler: EchoServer


@asynccontextmanager
async def pair() -> AsyncIterator[Pair]:
    """Two Connections talking over OS pipes: EchoClient <-> EchoServer."""
    a_reader, a_writer = await pipe()  # client -> server
    b_reader, b_writer = await pipe()  # server -> client
    echo, table = build_server(rpc)
    server = rpc.Connection(echo, table, a_reader, b_writer)
    echo.connection = server
    client = rpc.Connection(EchoClient(), client_table(rpc), b_reader, a_writer)
    async with client, server:
        yield Pair(client, server, echo)
