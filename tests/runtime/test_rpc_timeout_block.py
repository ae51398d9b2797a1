"""`with peer.request_timeout(seconds):` bounds every request of a block, typed ones included, on
that peer's connection only: the generated package's own peer and connection over real pipes,
the far end a raw peer that answers only when told to."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import acp_runtime.jsonrpc
import pytest
from cli_support import GENERATED
from rpc_testkit import TIMEOUT, pipe

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp


@dataclass
class Wired:
    peer: Any
    inbox: asyncio.StreamReader  # what the connection sends
    outbox: asyncio.StreamWriter  # what it reads

    async def recv(self) -> Any:
        return json.loads(await asyncio.wait_for(self.inbox.readline(), TIMEOUT))

    async def answer(self, request: Any, result: Any) -> None:
        self.outbox.write(
            json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n"
        )
        await self.outbox.drain()


@asynccontextmanager
async def wired(handler: Any = None, table: Any = None, limits: Any = None) -> AsyncIterator[Wired]:
    """An `AgentPeer` on a running connection whose far end is this test."""
    reader, outbox = await pipe()
    inbox, writer = await pipe()
    connection = acp.Connection(handler or object(), table or {}, reader, writer, limits=limits)
    run = asyncio.create_task(connection.run())
    try:
        yield Wired(acp.AgentPeer(connection), inbox, outbox)
    finally:
        outbox.close()
        await connection.close()
        await asyncio.wait_for(run, TIMEOUT)


async def test_a_typed_request_inside_the_block_times_out_and_is_cancelled() -> None:
    async with wired() as w:
        with w.peer.request_timeout(0.3):
            call = asyncio.create_task(w.peer.session_list())
            request = await w.recv()
            assert request["method"] == "session/list"
            with pytest.raises(TimeoutError, match="session/list got no answer within 0.3 s"):
                await asyncio.wait_for(call, TIMEOUT)
        assert await w.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request["id"]},
        }


async def test_outside_the_block_and_with_its_own_timeout_a_request_keeps_its_limit() -> None:
    async with wired() as w:
        with w.peer.request_timeout(0.2):
            pass
        outside = asyncio.create_task(w.peer.session_list())  # the default: no limit
        first = await w.recv()
        with w.peer.request_timeout(0.2):
            own = asyncio.create_task(w.peer.ext_request("_slow", {}, timeout=None))
            second = await w.recv()
            await asyncio.sleep(0.5)  # past the block's limit: neither gave up
            assert not outside.done() and not own.done()
        await w.answer(first, {"sessions": []})
        await w.answer(second, {"ok": True})
        assert (await asyncio.wait_for(outside, TIMEOUT)).sessions == []
        assert await asyncio.wait_for(own, TIMEOUT) == {"ok": True}


async def test_a_block_bounds_its_own_connection_only_and_nests() -> None:
    async with wired() as a, wired() as b:
        with a.peer.request_timeout(0.2), b.peer.request_timeout(None):
            on_b = asyncio.create_task(b.peer.session_list())
            await b.recv()
            with a.peer.request_timeout(30):  # the innermost block wins
                on_a = asyncio.create_task(a.peer.session_list())
                request = await a.recv()
            await asyncio.sleep(0.5)
            assert not on_a.done() and not on_b.done()
            await a.answer(request, {"sessions": []})
            assert (await asyncio.wait_for(on_a, TIMEOUT)).sessions == []
            with pytest.raises(TimeoutError):
                await a.peer.session_list()  # back to the outer block's 0.2 s
            on_b.cancel()


async def test_a_block_of_none_lifts_a_finite_default() -> None:
    async with wired(limits=acp_runtime.jsonrpc.Limits(request_timeout=0.1)) as w:
        with pytest.raises(TimeoutError):
            await w.peer.session_list()  # the connection's default
        await w.recv()
        await w.recv()  # its $/cancel_request
        with w.peer.request_timeout(None):
            call = asyncio.create_task(w.peer.session_list())
            request = await w.recv()
            await asyncio.sleep(0.4)
            assert not call.done()
        await w.answer(request, {"sessions": []})
        assert (await asyncio.wait_for(call, TIMEOUT)).sessions == []


class Forwarder:
    """Answers `_ask` by asking the far end in turn (a handler sending a request)."""

    peer: Any = None

    async def extension_request(self, method: str, params: Any) -> Any:
        return await self.peer.ext_request("_inner", {})


async def test_handlers_do_not_inherit_the_block_the_connection_started_in() -> None:
    handler = Forwarder()
    with acp.AgentPeer(object()).request_timeout(0.2):  # type: ignore[arg-type]
        pass  # a block on another connection: nothing to inherit
    reader, outbox = await pipe()
    inbox, writer = await pipe()
    connection = acp.Connection(handler, {}, reader, writer)
    handler.peer = acp.AgentPeer(connection)
    w = Wired(handler.peer, inbox, outbox)
    with handler.peer.request_timeout(0.2):
        run = asyncio.create_task(connection.run())  # started inside the block
    try:
        outbox.write(b'{"jsonrpc":"2.0","id":7,"method":"_ask","params":{}}\n')
        await outbox.drain()
        inner = await w.recv()
        assert inner["method"] == "_inner"
        await asyncio.sleep(0.5)  # past the block's limit: the handler's request still waits
        await w.answer(inner, {"ok": 1})
        assert await w.recv() == {"jsonrpc": "2.0", "id": 7, "result": {"ok": 1}}
    finally:
        outbox.close()
        await connection.close()
        await asyncio.wait_for(run, TIMEOUT)


@pytest.mark.parametrize("seconds", [0, -1, float("nan")])
def test_a_block_refuses_a_limit_that_is_not_positive(seconds: float) -> None:
    block = acp.AgentPeer(object()).request_timeout(seconds)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive or None"):
        block.__enter__()
