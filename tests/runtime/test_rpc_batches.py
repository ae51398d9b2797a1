"""Notifications that arrive together are handled as one batch per order key (issue 35): one
coroutine runs a key's queue, so these check that a batch keeps every guarantee of ``jsonrpc``."""

from __future__ import annotations

import asyncio
import json

from rpc_peers import RawPeer, rpc, served
from rpc_testkit import build_server, pipe


def _note(session: str, seq: int, method: str = "note", delay: float = 0.0) -> bytes:
    params = {"sessionId": session, "seq": seq, "delay": delay}
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n"


async def test_a_batch_keeps_order_per_key_survives_failures_and_holds_back_a_response() -> None:
    async with served() as s:
        call = asyncio.create_task(s.connection.request("peer/x", {}, None))
        request = await s.raw.recv()
        lines = [_note("a", 1, delay=0.05), _note("b", 1)]  # the first makes key "a" queue up
        for seq in range(2, 60):
            lines.append(_note("a", seq))
            if seq % 7 == 0:
                lines.append(_note("a", seq, method="bad_note"))  # raises in mid-batch
            lines.append(_note("b", seq))
        response = {"jsonrpc": "2.0", "id": request["id"], "result": {"done": True}}
        lines.append(json.dumps(response).encode() + b"\n")
        await s.raw.send(b"".join(lines))  # one write: one chunk, cut into one batch per key
        assert await asyncio.wait_for(call, 5) == {"done": True}
        # the response came only after every notification before it was handled
        handled = s.handler.notes
        assert len(handled) == 2 * 59 + 8
        for key in ("a", "b"):
            expected = []
            for seq in range(1, 60):
                expected.append(seq)
                if key == "a" and seq > 1 and seq % 7 == 0:
                    expected.append(-1)  # bad_note records itself, then fails
            assert [seq for k, seq in handled if k == key] == expected
        await s.raw.assert_alive()


async def test_a_slow_handler_holds_back_only_its_own_key() -> None:
    async with served() as s:
        lines = [_note(f"s{i}", i, delay=0.2 if i == 0 else 0.0) for i in range(20)]
        await s.raw.send(b"".join(lines))
        await s.handler.wait_notes(19)  # the slow one, alone under its key, holds nobody back
        assert sorted(seq for _, seq in s.handler.notes) == list(range(1, 20))
        await s.handler.wait_notes(20)
        await s.raw.assert_alive()


async def test_notifications_keyed_none_each_run_in_a_task_of_their_own() -> None:
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    echo, table = build_server(rpc)
    connection = rpc.Connection(
        echo, table, inbound_reader, outbound_writer, order_key=lambda method, params: None
    )
    echo.connection = connection
    async with connection:
        raw = RawPeer(outbound_reader, inbound_writer)
        lines = [_note("a", 1, delay=0.2)] + [_note("a", seq) for seq in range(2, 7)]
        await raw.send(b"".join(lines))
        await echo.wait_notes(6)
        # one session, but no order key: the slow first one does not hold the others back
        assert [seq for _, seq in echo.notes] == [2, 3, 4, 5, 6, 1]
        await raw.send(_note("a", 7, method="bad_note"))  # a failure in such a task is logged
        await raw.assert_alive()
        async with asyncio.timeout(5):
            while ("a", -1) not in echo.notes:
                await asyncio.sleep(0.01)
    inbound_writer.close()
