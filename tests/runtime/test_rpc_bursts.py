"""Bursts of output are written together (``jsonrpc.output``): frames sent with no input since
the previous write leave in one write when the event loop turns (or every ``CORK_BYTES``), while
the first frame after input (an answer) is written at once. Over real pipes, counting the
connection's writes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from acp_runtime.jsonrpc import output
from rpc_peers import RawPeer, rpc
from rpc_testkit import EchoParams, EchoResult, EchoServer, pipe, server_table


class Writes:
    """The sizes of the writes a connection made, and what else happened between them."""

    def __init__(self) -> None:
        self.events: list[str | int] = []

    def sizes(self) -> list[int]:
        return [event for event in self.events if isinstance(event, int)]

    def wrap(self, write: Callable[[bytes], None]) -> Callable[[bytes], None]:
        def counted(data: bytes) -> None:
            self.events.append(len(data))
            write(data)

        return counted


@asynccontextmanager
async def counted(handler: Any) -> AsyncIterator[tuple[Any, RawPeer, Writes]]:
    """A connection serving ``handler`` over OS pipes, its writes counted, and its raw peer."""
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    writes = Writes()
    outbound_writer.write = writes.wrap(outbound_writer.write)  # type: ignore[method-assign]
    connection = rpc.Connection(handler, server_table(rpc), inbound_reader, outbound_writer)
    handler.connection = connection
    run = asyncio.create_task(connection.run())
    try:
        yield connection, RawPeer(outbound_reader, inbound_writer), writes
    finally:
        inbound_writer.close()
        await connection.close()
        await asyncio.wait_for(run, 5)


def _note(seq: int, text: str = "") -> dict[str, Any]:
    return {"sessionId": "s", "seq": seq, "text": text}


async def test_a_burst_of_notifications_leaves_in_a_few_writes_in_order() -> None:
    async with counted(EchoServer(rpc)) as (connection, raw, writes):
        for seq in range(300):  # one loop turn: nothing here waits
            await connection.notify("peer/note", _note(seq))
        received = [(await raw.recv())["params"]["seq"] for _ in range(300)]
    assert received == list(range(300))
    total = sum(writes.sizes())
    # 300 frames of ~80 bytes: one write each without bursts
    assert len(writes.sizes()) <= 2 + total // output.CORK_BYTES, writes.sizes()


async def test_a_held_burst_is_written_every_cork_bytes() -> None:
    """A burst that never lets the loop turn holds at most CORK_BYTES (plus the frame that
    passed it) before writing: bounded memory, and the peer starts reading early."""
    text = "x" * 1000
    async with counted(EchoServer(rpc)) as (connection, raw, writes):

        async def read_all() -> list[int]:
            return [(await raw.recv())["params"]["seq"] for _ in range(500)]

        reading = asyncio.create_task(read_all())
        for seq in range(500):
            await connection.notify("peer/note", _note(seq, text))
        assert await asyncio.wait_for(reading, 5) == list(range(500))
    frame = len(json.dumps({"jsonrpc": "2.0", "method": "peer/note", "params": _note(0, text)}))
    assert max(writes.sizes()) <= output.CORK_BYTES + frame + 100, writes.sizes()
    assert len(writes.sizes()) >= 500 * frame // (output.CORK_BYTES + frame + 100)


class MarkingServer(EchoServer):
    """Its `echo` marks where the event loop next turns, then answers."""

    def __init__(self, writes: list[str | int]) -> None:
        super().__init__(rpc)
        self.marks = writes

    async def echo(self, params: EchoParams) -> EchoResult:
        asyncio.get_running_loop().call_soon(self.marks.append, "loop turned")
        return EchoResult(text=params.text)


async def test_an_answer_is_written_before_the_loop_turns_again() -> None:
    """The first frame after input is not held: a round trip is never delayed by a loop turn,
    and a notification the handler sent before it goes out first."""
    events: list[str | int] = []
    handler = MarkingServer(events)
    async with counted(handler) as (connection, raw, writes):
        writes.events = events
        for n in range(3):
            reply = await raw.call("echo", {"text": f"t{n}"})
            assert reply["result"] == {"text": f"t{n}"}
    answers = [i for i, event in enumerate(events) if isinstance(event, int)]
    turns = [i for i, event in enumerate(events) if event == "loop turned"]
    assert len(answers) == 3 and len(turns) == 3, events
    assert all(a < t for a, t in zip(answers, turns, strict=True)), events


class NotifyingServer(EchoServer):
    """Its `echo` sends 50 notifications, then answers."""

    async def echo(self, params: EchoParams) -> EchoResult:
        for seq in range(50):
            await self.connection.notify("peer/note", _note(seq))
        return EchoResult(text=params.text)


async def test_notifications_then_an_answer_arrive_in_the_order_sent() -> None:
    async with counted(NotifyingServer(rpc)) as (connection, raw, writes):
        await raw.send_json({"jsonrpc": "2.0", "id": 7, "method": "echo", "params": {"text": "a"}})
        seqs = [(await raw.recv())["params"]["seq"] for _ in range(50)]
        answer = await raw.recv()
    assert seqs == list(range(50))
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"text": "a"}}
    assert len(writes.sizes()) <= 3, writes.sizes()  # the first at once, the rest together


async def test_closing_writes_what_a_burst_still_holds() -> None:
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    connection = rpc.Connection(EchoServer(rpc), server_table(rpc), inbound_reader, outbound_writer)
    for seq in range(20):
        await connection.notify("peer/note", _note(seq))
    await connection.close()  # before the loop turned: the burst is still held
    raw = RawPeer(outbound_reader, inbound_writer)
    assert [(await raw.recv())["params"]["seq"] for _ in range(20)] == list(range(20))
    inbound_writer.close()
