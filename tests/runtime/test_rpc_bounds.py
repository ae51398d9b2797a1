"""Nothing received is lost, nothing waits forever, everything is bounded (issue 13, item 4)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any

import pytest
from rpc_peers import RawPeer, rpc, served
from rpc_testkit import TIMEOUT, EchoParams, EchoResult, build_server, pipe


class Odd:
    """Handlers that return what they must not, or ignore cancellation."""

    async def echo(self, params: EchoParams) -> Any:
        if params.text == "dict":
            return {"text": "a dict is not an EchoResult"}
        if params.text == "model":
            return EchoParams(text="wrong model")
        return EchoResult(text=params.text)

    async def extension_request(self, method: str, params: Any) -> Any:
        if method == "_inf":
            return {"value": float("inf")}
        await asyncio.sleep(30)  # "_stubborn": ignores cancellation
        return None


async def test_wrong_typed_and_non_finite_results_are_internal_errors() -> None:
    table = {"echo": rpc.MethodSpec("echo", "request", EchoParams, EchoResult, "echo")}
    async with served(handler=Odd(), table=table) as s:
        for text in ("dict", "model"):
            reply = await s.raw.call("echo", {"text": text})
            assert reply["error"] == {"code": rpc.INTERNAL_ERROR, "message": "Internal error"}
        reply = await s.raw.call("_inf", {})
        assert reply["error"]["code"] == rpc.INTERNAL_ERROR
        assert (await s.raw.call("echo", {"text": "ok"}))["result"] == {"text": "ok"}
        with pytest.raises(ValueError, match="non-finite"):
            await s.connection.request("x", {"v": float("nan")}, None)
        with pytest.raises(ValueError, match="non-finite"):
            await s.connection.notify("x", [float("-inf")])


@pytest.mark.parametrize(
    "template",
    [
        b'{"jsonrpc":"2.0","id":%d,"result":{"text":"\xff\xfe"}}',  # invalid UTF-8
        b'{"jsonrpc":"2.0","id":%d,"result":{"text":"cut sh',  # truncated line
        b'{"jsonrpc":"2.0","id":%d,"result":Infinity}',
        b'{"jsonrpc":"2.0","id":%d,"result":{"n":1e999}}',
        b'{"jsonrpc":"2.0","id":%d,"result":' + b"[" * 100_000 + b"}",  # too deep to parse
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        b'{"jsonrpc":"2.0","result":{"no":"id"}}',
    ],
)
async def test_a_broken_response_fails_its_request(template: bytes) -> None:
    async with served() as s:
        call = asyncio.create_task(s.connection.request("peer/x", {}, None))
        request = await s.raw.recv()
        line = template % request["id"] if b"%d" in template else template
        await s.raw.send(line + b"\n")
        with pytest.raises(rpc.RpcError) as info:
            await asyncio.wait_for(call, TIMEOUT)
        assert info.value.code in (rpc.PARSE_ERROR, rpc.INVALID_REQUEST, -32700)
        await s.raw.expect_silence()  # never answered
        await s.raw.assert_alive()


async def test_unmatched_null_id_error_leaves_the_timeout_to_decide() -> None:
    async with served() as s:
        first = asyncio.create_task(s.connection.request("peer/a", {}, None, timeout=0.5))
        second = asyncio.create_task(s.connection.request("peer/b", {}, None))
        a, b = await s.raw.recv(), await s.raw.recv()
        await s.raw.send_json({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "?"}})
        with pytest.raises(TimeoutError, match="peer/a got no answer within 0.5 s"):
            await asyncio.wait_for(first, TIMEOUT)
        assert await s.raw.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": a["id"]},
        }
        await s.raw.send_json({"jsonrpc": "2.0", "id": b["id"], "result": 2})
        assert await asyncio.wait_for(second, TIMEOUT) == 2


async def test_default_request_timeout_from_limits() -> None:
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    limits = rpc.Limits(request_timeout=0.2)
    connection = rpc.Connection(object(), {}, reader, out_writer, limits=limits)
    async with connection:
        with pytest.raises(TimeoutError):
            await connection.request("peer/x", None, None)
    writer.close()


async def test_eof_handles_every_notification_already_received() -> None:
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, reader, out_writer)
    run = asyncio.create_task(connection.run())
    frames = b"".join(
        json.dumps({"jsonrpc": "2.0", "method": "note", "params": p}).encode() + b"\n"
        for p in ({"sessionId": f"s{i % 3}", "seq": i, "delay": 0.001} for i in range(300))
    )
    writer.write(frames)
    await writer.drain()
    writer.close()  # EOF right behind them
    await asyncio.wait_for(run, TIMEOUT)
    assert sorted(seq for _, seq in handler.notes) == list(range(300))
    for key in ("s0", "s1", "s2"):
        seqs = [seq for k, seq in handler.notes if k == key]
        assert seqs == sorted(seqs)


async def test_queued_notifications_are_capped_by_pausing_never_dropping() -> None:
    gate = asyncio.Event()
    handled: list[int] = []

    class Gated:
        async def note(self, params: dict[str, Any]) -> None:
            await gate.wait()
            handled.append(params["seq"])

    table = {"note": rpc.MethodSpec("note", "notification", dict[str, Any], None, "note")}
    limits = rpc.Limits(max_queued_notifications=20)
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    connection = rpc.Connection(Gated(), table, reader, out_writer, limits=limits)
    async with connection:
        frames = b"".join(
            b'{"jsonrpc":"2.0","method":"note","params":{"seq":%d}}\n' % i for i in range(3000)
        )
        writer.write(frames)
        await asyncio.sleep(0.3)
        assert len(connection._notifications) <= 20  # reading paused at the cap
        gate.set()
        await writer.drain()
        for _ in range(500):
            if len(handled) == 3000:
                break
            await asyncio.sleep(0.01)
        assert handled == list(range(3000))  # nothing dropped, order kept
    writer.close()


async def test_concurrent_inbound_requests_are_capped() -> None:
    limits = rpc.Limits(max_inflight_requests=4)
    reader, writer = await pipe()
    out_reader, out_writer = await pipe()
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, reader, out_writer, limits=limits)
    raw = RawPeer(out_reader, writer)
    async with connection:
        for i in range(40):
            await raw.send_json(
                {"jsonrpc": "2.0", "id": i, "method": "slow", "params": {"delay": 0.05}}
            )
        await asyncio.sleep(0.02)
        assert len(connection._requests) <= 4
        answers = {(await raw.recv())["id"] for _ in range(40)}
        assert answers == set(range(40))
    writer.close()


async def test_a_peer_that_stops_reading_ends_the_connection_with_a_reason() -> None:
    limits = rpc.Limits(write_stall_timeout=0.5, max_output_bytes=4 << 20)
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()  # nobody reads out_reader
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, reader, out_writer, limits=limits)
    run = asyncio.create_task(connection.run())
    pending = asyncio.create_task(connection.request("peer/x", {}, None))
    text = "z" * 100_000
    for i in range(200):  # 20 MB of answers nobody reads
        writer.write(
            b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"%s"}}\n'
            % (i, text.encode())
        )
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="not reading"):
        await asyncio.wait_for(pending, TIMEOUT)
    await asyncio.wait_for(run, TIMEOUT)
    assert connection.closed and time.monotonic() - started < TIMEOUT
    writer.close()


@pytest.mark.parametrize("bounds_stalls", [True, False])
async def test_a_writer_that_bounds_its_own_stalls_is_not_timed_by_the_connection(
    bounds_stalls: bool,
) -> None:
    # the remote transports' sinks cut a stalled client off themselves (`bounds_stalls`): the
    # connection awaits their drain as it is; any other writer's drain gets write_stall_timeout
    class SlowSink:
        def __init__(self) -> None:
            self.bounds_stalls = bounds_stalls
            self.written = bytearray()
            self.room = asyncio.Event()

        def write(self, data: bytes) -> None:
            self.written += data

        async def drain(self) -> None:
            await self.room.wait()

        def close(self) -> None:
            self.room.set()

    limits = rpc.Limits(write_stall_timeout=0.2)
    reader, writer = await pipe()
    sink = SlowSink()
    connection = rpc.Connection(None, {}, reader, sink, limits=limits)
    run = asyncio.create_task(connection.run())
    sent = asyncio.create_task(connection.notify("peer/x", {"n": 1}))
    await asyncio.sleep(0.6)  # three of the connection's stall timeouts
    if bounds_stalls:
        assert not sent.done() and not connection.closed
        sink.room.set()  # the sink's own drain ends
        await asyncio.wait_for(sent, TIMEOUT)
        assert b'"peer/x"' in sink.written and not connection.closed
    else:
        with pytest.raises(ConnectionError, match="not reading"):
            await asyncio.wait_for(sent, TIMEOUT)
    await asyncio.wait_for(connection.close(), TIMEOUT)
    await asyncio.wait_for(run, TIMEOUT)
    writer.close()


async def test_a_writer_that_tells_when_it_must_be_drained_is_drained_only_then() -> None:
    # the remote transports' sinks say when they are full (`must_drain()`): a message sent
    # while there is room costs no drain (no coroutine a message); once full, sends wait
    class Sink:
        bounds_stalls = True

        def __init__(self) -> None:
            self.written = bytearray()
            self.full = False
            self.drains = 0
            self.room = asyncio.Event()

        def write(self, data: bytes) -> None:
            self.written += data

        def must_drain(self) -> bool:
            return self.full

        async def drain(self) -> None:
            self.drains += 1
            await self.room.wait()
            self.full = False

        def close(self) -> None:
            self.room.set()

    reader, writer = await pipe()
    sink = Sink()
    connection = rpc.Connection(None, {}, reader, sink)
    run = asyncio.create_task(connection.run())
    for n in range(20):
        await asyncio.wait_for(connection.notify("peer/x", {"n": n}), TIMEOUT)
    assert sink.drains == 0 and sink.written.count(b'"peer/x"') == 20
    sink.full = True
    sent = asyncio.create_task(connection.notify("peer/x", {"n": 20}))
    await asyncio.sleep(0.05)
    assert not sent.done() and sink.drains >= 1
    sink.room.set()
    await asyncio.wait_for(sent, TIMEOUT)
    assert sink.written.count(b'"peer/x"') == 21
    await asyncio.wait_for(connection.close(), TIMEOUT)
    await asyncio.wait_for(run, TIMEOUT)
    writer.close()


async def test_close_is_bounded_by_close_timeout() -> None:
    class Stubborn:
        def __init__(self) -> None:
            self.done = False
            self.tasks: list[asyncio.Task[Any]] = []

        async def extension_request(self, method: str, params: Any) -> Any:
            self.tasks.append(asyncio.current_task())  # type: ignore[arg-type]
            while not self.done:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    pass  # ignores cancellation

    limits = rpc.Limits(close_timeout=0.3)
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    stubborn = Stubborn()
    connection = rpc.Connection(stubborn, {}, reader, out_writer, limits=limits)
    run = asyncio.create_task(connection.run())
    writer.write(b'{"jsonrpc":"2.0","id":1,"method":"_stubborn"}\n')
    await writer.drain()
    await asyncio.sleep(0.1)
    started = time.monotonic()
    await asyncio.wait_for(connection.close(), TIMEOUT)
    assert time.monotonic() - started < 2.0 and run.done()
    writer.close()
    stubborn.done = True  # let the stubborn handler end, for the test's own teardown
    for task in stubborn.tasks:
        task.cancel()


async def test_floods_of_unknown_ids_log_a_bounded_number_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acp_runtime.jsonrpc")
    async with served() as s:
        flood = b"".join(
            b'{"jsonrpc":"2.0","id":%d,"result":null}\n' % i
            + b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}\n' % i
            + b'{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}\n'
            for i in range(5000)
        )
        await s.raw.send(flood)
        await s.raw.assert_alive()
    assert len(caplog.records) < 40, len(caplog.records)


@pytest.mark.parametrize(
    "raw_id", ['"' + "i" * 300 + '"', str(1 << 63), str(-(1 << 63) - 1), "1" * 400]
)
async def test_ids_over_the_limits_are_refused_with_a_null_id(raw_id: str) -> None:
    async with served() as s:
        await s.raw.send(
            b'{"jsonrpc":"2.0","id":%s,"method":"echo","params":{"text":"x"}}\n' % raw_id.encode()
        )
        reply = await s.raw.recv()
        assert reply["id"] is None and reply["error"]["code"] == rpc.INVALID_REQUEST
        await s.raw.assert_alive()


class _MemoryReader:
    """Input that never ends: one line, then nothing (a peer that keeps its end open)."""

    def __init__(self, first: bytes) -> None:
        self._pending = [first]
        self._forever: asyncio.Event = asyncio.Event()

    async def read(self, n: int = -1) -> bytes:
        if self._pending:
            return self._pending.pop()
        await self._forever.wait()
        return b""


class _ClosingWriter:
    """A writer whose ``drain`` finishes at once and meanwhile starts ``on_drain`` (once)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.on_drain: Any = None
        self.started: list[asyncio.Task[Any]] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    async def drain(self) -> None:
        callback, self.on_drain = self.on_drain, None
        if callback is not None:
            self.started.append(asyncio.ensure_future(callback()))

    def close(self) -> None:
        pass


async def test_close_during_a_drain_that_finished_at_once_stops_the_read_loop() -> None:
    # asyncio.wait_for on 3.11 swallows a cancellation that arrives just as the awaited drain
    # finishes; the read loop then read on forever and close() never returned.
    table = {"echo": rpc.MethodSpec("echo", "request", EchoParams, EchoResult, "echo")}
    reader = _MemoryReader(b'{"jsonrpc":"2.0","method":"unknown/note"}\n')
    writer = _ClosingWriter()
    connection = rpc.Connection(Odd(), table, reader, writer)
    writer.on_drain = connection.close
    run = asyncio.create_task(connection.run())
    await asyncio.wait_for(asyncio.wait([run]), TIMEOUT)
    await asyncio.wait_for(asyncio.gather(*writer.started), TIMEOUT)
    assert run.done() and connection.closed


async def test_close_with_output_nobody_reads_aborts_after_close_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Answers are buffered (the peer never reads them, the stall timeout is far away) when the
    # program closes: close() flushes for close_timeout, then aborts the transport.
    limits = rpc.Limits(close_timeout=0.3, write_stall_timeout=60, max_output_bytes=64 << 20)
    reader, writer = await pipe()
    loop = asyncio.get_running_loop()
    unread_fd, write_fd = os.pipe()  # its read end stays open and is never read
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    out_writer = asyncio.StreamWriter(transport, protocol, None, loop)
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, reader, out_writer, limits=limits)
    run = asyncio.create_task(connection.run())
    text = "z" * 100_000
    for i in range(60):  # 6 MB of answers, far over what the pipe and its idle reader hold
        writer.write(
            b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"%s"}}\n'
            % (i, text.encode())
        )
    async with asyncio.timeout(TIMEOUT):  # until answers pile up unwritten (reading pauses then)
        while out_writer.transport.get_write_buffer_size() == 0:
            await asyncio.sleep(0.01)
    with caplog.at_level(logging.WARNING):
        await asyncio.wait_for(connection.close(), TIMEOUT)
    assert run.done() and connection.closed
    assert out_writer.transport.is_closing()
    assert any("not flushed" in record.getMessage() for record in caplog.records)
    writer.close()
    os.close(unread_fd)


async def test_notifications_for_many_distinct_sessions_are_capped_too() -> None:
    # Each session id has its own ordered queue and worker; the cap counts every notification
    # received and not yet handled, across sessions, so 5,000 sessions never mean 5,000 tasks.
    limits = rpc.Limits(max_queued_notifications=50)
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, reader, out_writer, limits=limits)
    async with connection:
        writer.write(
            b"".join(
                b'{"jsonrpc":"2.0","method":"note","params":{"sessionId":"s%d","seq":%d,"delay":0.02}}\n'
                % (i, i)
                for i in range(5000)
            )
        )
        await writer.drain()
        await handler.wait_notes(5000)
        assert handler.max_active_notes <= 50
        assert len(asyncio.all_tasks()) < 200  # workers end with their sessions' queues
        assert sorted(seq for _, seq in handler.notes) == list(range(5000))
    writer.close()


async def test_a_flood_while_a_handler_awaits_the_peer_closes_past_the_overflow_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Reading goes on while a handler awaits an answer that may be behind the backlog; a peer
    # that floods instead of answering is cut off at overflow_factor times the cap.
    gate = asyncio.Event()

    class Asking:
        async def note(self, params: dict[str, Any]) -> None:
            if params["seq"] == 0:
                await connection.request("peer/never_answered", {}, None)
            await gate.wait()

    table = {"note": rpc.MethodSpec("note", "notification", dict[str, Any], None, "note")}
    limits = rpc.Limits(max_queued_notifications=10, overflow_factor=3)
    reader, writer = await pipe()
    _out_reader, out_writer = await pipe()
    connection = rpc.Connection(Asking(), table, reader, out_writer, limits=limits)
    run = asyncio.create_task(connection.run())
    writer.write(b'{"jsonrpc":"2.0","method":"note","params":{"seq":0}}\n')
    await writer.drain()
    await asyncio.sleep(0.05)  # the handler now awaits the peer
    with caplog.at_level(logging.WARNING):
        writer.write(
            b"".join(
                b'{"jsonrpc":"2.0","method":"note","params":{"seq":%d}}\n' % i
                for i in range(1, 200)
            )
        )
        await writer.drain()
        await asyncio.wait_for(run, TIMEOUT)
    assert connection.closed
    assert any("over the inbound limits" in record.getMessage() for record in caplog.records)
    gate.set()
    writer.close()
