"""The remote server against hostile peers, the quick cases (issue 32), over a real uvicorn on
127.0.0.1: authentication before any body is read, body timeout, the server-wide memory budget,
non-finite numbers, refused ids answered, a refused initialize retried, connections that never
get past initialize reclaimed. The slow and flood cases are in test_hostile.py (`nox -s hostile`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from tests.remote.support import STEP_TIMEOUT, EchoAgent, acp, remote, uvicorn_server
from tests.remote.test_routing import INIT, initialize, rpc

NEW = {"cwd": "/", "mcpServers": []}


def test_the_server_wide_limits_default_to_a_small_machine() -> None:
    limits = remote.RemoteLimits()
    assert limits.max_total_buffered_bytes == 256 * 1024 * 1024
    assert limits.max_initialize_bytes == 1024 * 1024
    assert (limits.setup_timeout, limits.header_timeout, limits.body_timeout) == (10, 10, 30)
    assert limits.shutdown_timeout <= 10


async def _raw(base: str, head: str, body: bytes = b"") -> bytes:
    """Send a request head (and maybe part of a body) on a raw socket; the response's first line."""
    host, port = base.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head.encode() + body)
        return await asyncio.wait_for(reader.readline(), STEP_TIMEOUT)
    finally:
        writer.close()


def _post_head(base: str, length: int, extra: str = "") -> str:
    return (
        f"POST /acp HTTP/1.1\r\nHost: {base}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    )


async def test_requests_are_refused_before_their_body_is_read() -> None:
    def hook(headers: Mapping[str, str]) -> object:
        return headers.get("x-token") == "good" or None

    app = remote.acp_asgi_app(EchoAgent(), authenticate=hook)
    async with uvicorn_server(app) as base:
        # 16 MiB announced, none sent: the answer comes from the headers alone
        big = 16 * 1024 * 1024
        assert (await _raw(base, _post_head(base, big))).startswith(b"HTTP/1.1 401")
        unknown = "X-Token: good\r\nAcp-Connection-Id: nope\r\n"
        assert (await _raw(base, _post_head(base, big, unknown))).startswith(b"HTTP/1.1 404")
        # an authenticated client without a connection may only send a small body
        opening = _post_head(base, 2 * 1024 * 1024, "X-Token: good\r\n")
        assert (await _raw(base, opening)).startswith(b"HTTP/1.1 413")


async def test_a_body_that_stalls_is_answered_408() -> None:
    app = remote.acp_asgi_app(EchoAgent(), limits=remote.RemoteLimits(body_timeout=0.5))
    async with uvicorn_server(app) as base:
        line = await _raw(base, _post_head(base, 100), b'{"jsonrpc":')
        assert line.startswith(b"HTTP/1.1 408"), line


async def test_the_memory_budget_bounds_request_bodies() -> None:
    limits = remote.RemoteLimits(max_total_buffered_bytes=64 * 1024)
    app = remote.acp_asgi_app(EchoAgent(), limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        note = {"jsonrpc": "2.0", "method": "x/note", "params": {"pad": "x" * 80 * 1024}}
        refused = await http.post("/acp", json=note, headers=conn)
        assert refused.status_code == 503 and refused.headers["retry-after"]
        small = {"jsonrpc": "2.0", "method": "x/note", "params": {}}
        assert (await http.post("/acp", json=small, headers=conn)).status_code == 202
        assert (await http.delete("/acp", headers=conn)).status_code == 202
        assert app.registry.budget.used == 0


class CountingAgent(EchoAgent):
    """Counts the chunks its flood got out."""

    sent = 0

    async def _send(self, session: str, update: dict[str, Any]) -> None:
        await super()._send(session, update)
        type(self).sent += 1


async def test_the_memory_budget_bounds_output_for_clients_that_stop_reading() -> None:
    agent = CountingAgent()
    limits = remote.RemoteLimits(
        max_buffered_bytes=8 * 1024 * 1024,
        max_total_buffered_bytes=256 * 1024,
        max_output_stall=0.5,
    )
    app = remote.acp_asgi_app(agent, limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        async with http.stream("GET", "/acp", headers={**conn, "Accept": "text/event-stream"}):
            assert (
                await http.post("/acp", json=rpc(1, "session/new", NEW), headers=conn)
            ).status_code == 202
            for _ in range(200):
                if agent.store:
                    break
                await asyncio.sleep(0.02)
        (session,) = agent.store
        flood = rpc(
            2,
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "flood 20000"}]},
        )
        scoped = {**conn, "Acp-Session-Id": session}
        assert (await http.post("/acp", json=flood, headers=scoped)).status_code == 202
        for _ in range(400):  # nobody reads the session stream: cut after the stall
            if agent.flood_failed:
                break
            await asyncio.sleep(0.05)
        assert agent.flood_failed, "the agent was not stopped"
        # 256 KiB of 1 KiB chunks, not the 8 MiB the connection alone may hold
        assert CountingAgent.sent < 1000, CountingAgent.sent
        for _ in range(100):
            if not app.registry.connections:
                break
            await asyncio.sleep(0.05)
        assert app.registry.budget.used == 0  # what the closed connection held is given back


async def test_non_finite_numbers_are_refused_400() -> None:
    app = remote.acp_asgi_app(EchoAgent())
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        huge = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1e999}}'
        json_type = {"Content-Type": "application/json"}
        assert (await http.post("/acp", content=huge, headers=json_type)).status_code == 400
        conn = {"Acp-Connection-Id": await initialize(http), **json_type}
        note = b'{"jsonrpc":"2.0","method":"x/note","params":{"n":1e999}}'
        assert (await http.post("/acp", content=note, headers=conn)).status_code == 400


async def test_refused_ids_are_answered_and_leave_nothing_behind_http() -> None:
    app = remote.acp_asgi_app(EchoAgent())
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        for bad in ("x" * 300, 2**64):
            answer = await http.post("/acp", json={**INIT, "id": bad})
            assert answer.status_code == 400
            assert answer.json()["error"]["code"] == -32600 and answer.json()["id"] is None
        assert app.registry.connections == {}  # nothing held: the client simply tries again
        conn = {"Acp-Connection-Id": await initialize(http)}
        for n in range(50):
            long_id = {"jsonrpc": "2.0", "id": f"{n:04}" + "y" * 300, "method": "session/list"}
            answer = await http.post("/acp", json=long_id, headers=conn)
            assert answer.status_code == 400 and answer.json()["error"]["code"] == -32600
        (connection,) = app.registry.connections.values()
        assert connection.pending_routes == {}


class RefusingOnceAgent(EchoAgent):
    """Refuses the first initialize it sees (all copies together), then accepts."""

    refused = False

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        if not RefusingOnceAgent.refused:
            RefusingOnceAgent.refused = True
            raise acp.RpcError(-32602, "try again")
        return await super().initialize(params)


async def test_a_refused_initialize_can_be_retried_http() -> None:
    RefusingOnceAgent.refused = False
    app = remote.acp_asgi_app(RefusingOnceAgent(), limits=remote.RemoteLimits(max_connections=1))
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        first = await http.post("/acp", json=INIT)
        assert first.status_code == 200 and first.json()["error"]["message"] == "try again"
        assert "acp-connection-id" not in first.headers
        await initialize(http)  # the slot was freed at once (max_connections=1)


async def _ws_answer(ws: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
    return parsed


async def test_a_refused_initialize_can_be_retried_websocket() -> None:
    RefusingOnceAgent.refused = False
    app = remote.acp_asgi_app(RefusingOnceAgent())
    async with uvicorn_server(app) as base, ws_connect(f"ws://{base}/acp") as ws:
        await ws.send(json.dumps({**INIT, "id": "z" * 300}))
        assert (await _ws_answer(ws))["error"]["code"] == -32600  # refused id, answered
        await ws.send(json.dumps({**INIT, "id": 1}))
        assert (await _ws_answer(ws))["error"]["message"] == "try again"  # refused by the agent
        await ws.send(json.dumps({**INIT, "id": 2}))
        assert "result" in await _ws_answer(ws)
        await ws.send(json.dumps(rpc(3, "session/new", NEW)))
        assert "sessionId" in (await _ws_answer(ws))["result"]


async def test_connections_that_stop_after_initialize_are_reclaimed() -> None:
    limits = remote.RemoteLimits(max_connections=3, setup_timeout=0.5)
    app = remote.acp_asgi_app(EchoAgent(), limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        for _ in range(3):
            await initialize(http)  # never followed up
        assert (await http.post("/acp", json=INIT)).status_code == 503
        for _ in range(100):  # bounded: the flood's slots come back after setup_timeout
            answer = await http.post("/acp", json=INIT)
            if answer.status_code == 200:
                break
            await asyncio.sleep(0.1)
        assert answer.status_code == 200
        # a client that comes back keeps its connection past setup_timeout
        conn = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        assert (
            await http.post("/acp", json=rpc(1, "session/list", {}), headers=conn)
        ).status_code == 202
        await asyncio.sleep(1.5)
        assert (
            await http.post("/acp", json=rpc(2, "session/list", {}), headers=conn)
        ).status_code == 202
        async with ws_connect(f"ws://{base}/acp") as ws:  # the same over WebSocket
            await ws.send(json.dumps(INIT))
            assert "result" in await _ws_answer(ws)
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
        async with ws_connect(f"ws://{base}/acp") as ws:  # and a WebSocket that says nothing
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
