"""The runtime's fast paths: the pipe protocol reader, one-pass frames, idle notification workers,
answers to requests cancelled before they started, and write flow control."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from acp_runtime.jsonrpc import framing, limits, pipes
from rpc_peers import RawPeer, rpc, served
from rpc_testkit import (
    HERE,
    TIMEOUT,
    EchoClient,
    EchoParams,
    EchoResult,
    NoteParams,
    build_server,
    client_table,
    pipe,
)

GENERATED = Path(__file__).resolve().parents[2] / "generated"


async def push_pipe() -> tuple[Any, asyncio.StreamWriter]:
    """A one-way OS pipe whose read end is the runtime's own pipe protocol (push mode)."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = pipes._PipeReader()
    await loop.connect_read_pipe(lambda: reader, os.fdopen(read_fd, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def served_push(max_line_bytes: int = 1 << 20, table: dict[str, Any] | None = None) -> Any:
    """Like ``served``, but the connection reads through ``_PipeReader``."""
    return served(max_line_bytes, table=table, inbound_pipe=push_pipe)


async def test_push_reader_serves_requests_errors_and_oversized_lines() -> None:
    async with served_push(max_line_bytes=1000) as s:
        await s.raw.assert_alive()
        # two frames split at odd places, in one write and across writes
        await s.raw.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"te')
        await s.raw.send(
            b'xt":"a"}}\n{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"b"}}\n'
        )
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "a"}}
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"text": "b"}}
        await s.raw.send(b"garbage\n")
        assert (await s.raw.recv())["error"]["code"] == rpc.PARSE_ERROR
        await s.raw.send_json(
            {"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"text": "y" * 5000}}
        )
        reply = await s.raw.recv()
        assert reply["id"] == 3 and reply["error"]["code"] == rpc.INVALID_REQUEST
        await s.raw.assert_alive()


async def test_push_reader_trailing_line_at_eof_and_read_compat() -> None:
    inbound_reader, inbound_writer = await push_pipe()
    outbound_reader, outbound_writer = await pipe()
    handler, table = build_server(rpc)
    connection = rpc.Connection(handler, table, inbound_reader, outbound_writer)
    run_task = asyncio.create_task(connection.run())
    raw = RawPeer(outbound_reader, inbound_writer)
    await raw.send(b'{"jsonrpc":"2.0","id":1,"method":')
    inbound_writer.close()
    assert (await raw.recv())["error"]["code"] == rpc.PARSE_ERROR
    await asyncio.wait_for(run_task, TIMEOUT)
    assert connection.closed

    # Unattached, the protocol is an ordinary ReaderLike.
    reader, writer = await push_pipe()
    writer.write(b"abc")
    writer.write(b"def")
    await writer.drain()
    await asyncio.sleep(0.02)
    assert await reader.read(4) == b"abcd"
    assert await reader.read() == b"ef"
    writer.close()
    assert await reader.read() == b""


async def test_a_pipe_is_read_into_buffers_the_heap_serves() -> None:
    """asyncio reads a pipe 256 KiB at a time: a buffer that big is mapped, shrunk and unmapped
    by the allocator for every read (three system calls per message when messages come one at a
    time, a third of a round trip's CPU). The runtime's pipes read at most 64 KiB, what a pipe
    holds, and a line longer than that still arrives whole."""
    import tracemalloc

    reader, writer = await push_pipe()
    writer.write(b"x" * 100)
    await writer.drain()
    await asyncio.sleep(0.02)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        await asyncio.sleep(0)
        assert await reader.read() == b"x" * 100
        writer.write(b"y" * 100)
        await writer.drain()
        for _ in range(50):  # the read happens in the transport's callback
            await asyncio.sleep(0.001)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert await reader.read() == b"y" * 100
    assert peak < pipes.PIPE_READ_BYTES + 16 * 1024, f"{peak} bytes allocated to read 100"

    long_line = b"z" * (3 * pipes.PIPE_READ_BYTES) + b"\n"
    async with served_push() as s:
        await s.raw.send(
            long_line[:-1].join(
                [b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"', b'"}}\n']
            )
        )
        assert await s.raw.recv() == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"text": long_line[:-1].decode()},
        }


async def test_a_round_trip_does_not_ask_asyncio_for_the_running_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On CPython 3.11 every ``asyncio.get_running_loop()`` (and ``create_task``, and
    ``current_task()`` without a loop) is a ``getpid`` system call: a connection asks once, not
    three times a round trip."""
    from rpc_peers import pair

    asked: list[str] = []

    def counting(name: str) -> Any:
        real = getattr(asyncio, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if name != "current_task" or not args:  # with a loop it needs no look-up
                asked.append(name)
            return real(*args, **kwargs)

        return call

    async with pair() as p:
        for _ in range(5):  # warm-up: the first round trips may ask
            await p.client.request("echo", EchoParams(text="w"), EchoResult)
        for name in ("get_running_loop", "create_task", "current_task", "ensure_future"):
            monkeypatch.setattr(asyncio, name, counting(name))
        for _ in range(50):
            await p.client.request("echo", EchoParams(text="x"), EchoResult)
        monkeypatch.undo()
    assert len(asked) <= 5, asked


async def test_notifications_ordered_per_key_across_many_keys() -> None:
    # More keys than idle workers are kept: retired workers come back in order.
    keys = [f"s{i}" for i in range(limits._IDLE_WORKERS_MAX + 40)]
    async with served_push() as s:
        for seq in range(3):
            for key in keys:
                await s.raw.send_json(
                    {"jsonrpc": "2.0", "method": "note", "params": {"sessionId": key, "seq": seq}}
                )
            await s.handler.wait_notes(len(keys) * (seq + 1))
        for key in keys:
            assert [q for k, q in s.handler.notes if k == key] == [0, 1, 2]
        assert len(s.connection._notifications._idle) <= limits._IDLE_WORKERS_MAX
        await s.raw.assert_alive()


async def test_cancel_before_start_answers_the_methods_cancelled_result() -> None:
    _, table = build_server(rpc)
    spec = table["slow"]
    table = {
        **table,
        "slow": rpc.MethodSpec(
            spec.method, spec.kind, spec.params, spec.result, spec.handler, cancelled={"text": "-"}
        ),
    }
    async with served_push(table=table) as s:
        await s.raw.send(
            b'{"jsonrpc":"2.0","id":1,"method":"slow","params":{"delay":30,"text":"never"}}\n'
            b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n'
        )
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "-"}}
        assert s.handler.started == []
        # and once started, the same answer comes from the cancelled handler
        await s.raw.send_json(
            {"jsonrpc": "2.0", "id": 2, "method": "slow", "params": {"delay": 30, "text": "L"}}
        )
        await asyncio.sleep(0.05)
        await s.raw.send_json(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}}
        )
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"text": "-"}}
        assert s.handler.cancelled == ["L"]
        await s.raw.assert_alive()


async def test_answers_backed_up_pause_reading_with_bounded_buffers() -> None:
    # The peer sends requests and reads nothing: our answers fill the pipe and the transport
    # buffer, then the connection stops reading instead of buffering answers without bound.
    async with served_push() as s:
        text = "z" * 2000
        frames = b"".join(
            json.dumps(
                {"jsonrpc": "2.0", "id": i, "method": "echo", "params": {"text": text}}
            ).encode()
            + b"\n"
            for i in range(2000)
        )
        s.raw.writer.write(frames)  # ~4 MB of requests, ~4 MB of answers
        await asyncio.sleep(0.3)
        transport = s.connection._writer.transport
        high = transport.get_write_buffer_limits()[1]
        # at most the answers to one chunk of requests beyond the high-water mark
        assert transport.get_write_buffer_size() <= high + 2 * rpc.READ_CHUNK
        assert len(s.handler.finished) < 2000  # it stopped reading
        # reading the answers lets everything through
        for _ in range(2000):
            assert (await s.raw.recv())["result"]["text"] == text
        await s.raw.assert_alive()


def test_one_pass_frames_equal_the_two_pass_form() -> None:
    sys.path.insert(0, str(GENERATED))
    try:
        import acp_v1 as acp
    finally:
        sys.path.remove(str(GENERATED))
    samples = [
        acp.SessionNotification.from_dict(
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": 'line\nbreak \u2028 "quoted"'},
                    "futureField": {"kept": [1, 2.5, None]},
                },
                "_meta": None,
            }
        ),
        acp.PromptResponse(stop_reason="end_turn"),
        acp.PromptRequest.from_dict({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}),
    ]
    for model in samples:
        one = framing._notification_frame("m", framing._to_json(model))
        two = rpc.encode_message(
            {"jsonrpc": "2.0", "method": "m", "params": rpc.to_jsonable(model)}
        )
        assert one == two, (one, two)
        assert framing._result_frame(
            "x", framing._to_json(model, type(model))
        ) == rpc.encode_message(
            {"jsonrpc": "2.0", "id": "x", "result": rpc.to_jsonable(model, type(model))}
        )
    assert framing._to_json(None) == b"null"
    assert framing._request_frame(7, "a/b", None) == b'{"jsonrpc":"2.0","id":7,"method":"a/b"}\n'
    assert pydantic_core.from_json(framing._request_frame(1, 'we"ird\n', b"[1]")) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": 'we"ird\n',
        "params": [1],
    }


async def test_spawn_reads_the_child_through_its_own_pipe() -> None:
    connection, process = await rpc.spawn(
        [sys.executable, str(HERE / "rpc_testkit.py")], EchoClient(), client_table(rpc)
    )
    assert process.stdout is None and process.stdin is not None
    async with connection:
        results = await asyncio.gather(
            *(connection.request("echo", EchoParams(text=str(i)), EchoResult) for i in range(200))
        )
        assert [r.text for r in results] == [str(i) for i in range(200)]
        for seq in range(50):
            await connection.notify("note", NoteParams(session_id="s", seq=seq))
        assert await connection.request("count", None, int) == 1
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_spawn_sees_eof_when_the_child_exits(tmp_path: Path) -> None:
    connection, process = await rpc.spawn(
        [sys.executable, "-c", "import sys; sys.stdout.write('{}\\n'); sys.stdout.flush()"],
        EchoClient(),
        client_table(rpc),
    )
    await asyncio.wait_for(connection.run(), TIMEOUT)  # returns at EOF
    assert connection.closed
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    with pytest.raises(ConnectionError):
        await connection.request("echo", {"text": "x"}, None)
