"""The output cap tells a slow reader from a peer that stopped reading (issue 32, requirement 3).

Concurrent results or requests over ``Limits.max_output_bytes`` reach a peer that reads them; a
peer is cut only when it drains our output slower than ``Limits.min_drain_rate`` over
``Limits.write_stall_timeout``; ``close()`` fails the requests it leaves blocked on writing at
once, without tracebacks. Real OS pipes and TCP sockets; the figures of the issue (7 x 10 MB,
2 x 40 MB, 8 x 10 MB sent) are in ``tests/reliability/test_hostile_clients_slow.py``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from rpc_peers import rpc
from rpc_testkit import (
    TIMEOUT,
    EchoClient,
    EchoParams,
    EchoResult,
    build_server,
    client_table,
    pipe,
)

MB = 1 << 20


@asynccontextmanager
async def piped(server_limits: Any, client_limits: Any = None) -> AsyncIterator[Any]:
    """An echo server and a client Connection over two OS pipes (64 kB kernel buffers)."""
    a_reader, a_writer = await pipe()  # client -> server
    b_reader, b_writer = await pipe()  # server -> client
    echo, table = build_server(rpc)
    server = rpc.Connection(echo, table, a_reader, b_writer, limits=server_limits)
    client = rpc.Connection(
        EchoClient(), client_table(rpc), b_reader, a_writer, limits=client_limits
    )
    async with client, server:
        yield client, server


async def test_concurrent_results_over_the_output_bound_all_reach_a_reading_peer() -> None:
    # 7 answers of 1 MB at once to a peer that reads them: over max_output_bytes in total.
    limits = rpc.Limits(max_output_bytes=256 * 1024, write_stall_timeout=5.0)
    async with piped(limits) as (client, server):
        text = "a" * MB
        calls = [client.request("echo", EchoParams(text=text), EchoResult) for _ in range(7)]
        results = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
        assert [r.text == text for r in results] == [True] * 7
        assert not server.closed and not client.closed


async def test_concurrent_requests_over_the_output_bound_are_all_answered() -> None:
    # The client's own output backs up with its 8 requests while the server's backs up with
    # its answers: reading goes on for the answers, neither end waits for the other for ever.
    limits = rpc.Limits(max_output_bytes=256 * 1024, write_stall_timeout=5.0)
    async with piped(limits, limits) as (client, _server):
        texts = [str(i) * MB for i in range(8)]
        calls = [client.request("echo", EchoParams(text=t), EchoResult) for t in texts]
        results = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
        assert [r.text for r in results] == texts


@asynccontextmanager
async def raw_served(limits: Any) -> AsyncIterator[tuple[Any, int, Any]]:
    """An echo server over pipes; the test reads the file descriptor of its output by hand
    (no stream buffer in between: what the test has not read stays with the server)."""
    in_reader, in_writer = await pipe()
    loop = asyncio.get_running_loop()
    out_fd, write_fd = os.pipe()
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    out_writer = asyncio.StreamWriter(transport, protocol, None, loop)
    echo, table = build_server(rpc)
    server = rpc.Connection(echo, table, in_reader, out_writer, limits=limits)
    run = asyncio.create_task(server.run())
    try:
        yield server, out_fd, in_writer
    finally:
        in_writer.close()
        await asyncio.wait_for(server.close(), TIMEOUT)
        await asyncio.wait_for(run, TIMEOUT)
        os.close(out_fd)


def _echo(request_id: int, size: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"%s"}}\n' % (
        request_id,
        b"s" * size,
    )


async def test_a_slow_reader_gets_everything_and_a_trickling_one_is_cut() -> None:
    limits = rpc.Limits(
        max_output_bytes=64 * 1024, write_stall_timeout=0.5, min_drain_rate=64 * 1024
    )
    async with raw_served(limits) as (server, out, into):
        into.write(b"".join(_echo(i, 512 * 1024) for i in range(4)))  # 2 MB of answers
        lines = 0
        async with asyncio.timeout(TIMEOUT):
            while lines < 4:  # a slow reader: 64 kB at a time, a pause between reads
                lines += (await asyncio.to_thread(os.read, out, 64 * 1024)).count(b"\n")
                await asyncio.sleep(0.01)
        assert not server.closed
        into.write(_echo(9, 2 * MB))  # then a reader far under 64 kB/s: 1 kB every 0.1 s
        await into.drain()
        async with asyncio.timeout(TIMEOUT):
            while not server.closed:
                await asyncio.to_thread(os.read, out, 1024)
                await asyncio.sleep(0.1)
    assert server.closed


async def _silent_tcp() -> tuple[Any, Any, Any]:
    """A TCP connection to a peer that never reads: our reader, our writer, what to close."""
    accepted: asyncio.Future[tuple[Any, Any]] = asyncio.get_running_loop().create_future()
    listener = await asyncio.start_server(lambda r, w: accepted.set_result((r, w)), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    _silent_reader, silent_writer = await accepted

    def done() -> None:
        silent_writer.close()
        listener.close()

    return reader, writer, done


async def _silent_pipe() -> tuple[Any, Any, Any]:
    """Two OS pipes: nothing comes in, and what we write is never read."""
    reader, _writer = await pipe()
    loop = asyncio.get_running_loop()
    unread_fd, write_fd = os.pipe()
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer, lambda: os.close(unread_fd)


@pytest.mark.parametrize("transport", ["tcp", "pipe"])
async def test_close_fails_requests_blocked_on_writing_at_once(
    caplog: pytest.LogCaptureFixture, transport: str
) -> None:
    # A peer that never reads: our requests wait for the transport (the stall window is far
    # away); close() fails every one of them now, with no traceback logged by asyncio.
    caplog.set_level(logging.DEBUG)
    reader, writer, done_with = await (_silent_tcp if transport == "tcp" else _silent_pipe)()
    limits = rpc.Limits(write_stall_timeout=120.0, close_timeout=0.2)
    connection = rpc.Connection(object(), {}, reader, writer, limits=limits)
    run = asyncio.create_task(connection.run())
    requests = [
        asyncio.create_task(connection.request("x", {"t": "z" * (8 * MB)}, None)) for _ in range(5)
    ]
    async with asyncio.timeout(TIMEOUT):  # until the writes are backed up
        while writer.transport.get_write_buffer_size() < 8 * MB:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(connection.close(), TIMEOUT)
    done, _ = await asyncio.wait(requests, timeout=TIMEOUT)  # far under write_stall_timeout
    assert done == set(requests)
    assert all(isinstance(r.exception(), ConnectionError) for r in requests)
    await asyncio.wait_for(run, TIMEOUT)
    assert writer.transport.is_closing()
    done_with()
    await asyncio.sleep(0.05)
    text = "\n".join(r.getMessage() + str(r.exc_info) for r in caplog.records)
    assert "InvalidStateError" not in text and "Traceback" not in text
    assert not [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR]
