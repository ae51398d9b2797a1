"""Limits and security of our ASGI app over a real uvicorn on 127.0.0.1: each limit's default
and what happens past it; Origin checks; the authentication hook; no cross-connection use."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.remote.support import STEP_TIMEOUT, EchoAgent, remote, uvicorn_server
from tests.remote.test_routing import INIT, JSON, initialize, rpc

SSE = {"Accept": "text/event-stream"}
NEW = {"cwd": "/", "mcpServers": []}


def test_limit_defaults_follow_the_reference() -> None:
    limits = remote.RemoteLimits()
    assert limits.max_buffered_bytes == 64 * 1024 * 1024  # TS DEFAULT_MAX_BUFFERED_BYTES
    assert limits.max_output_stall == 60.0  # TS DEFAULT_MAX_OUTPUT_STALL_MS
    assert limits.max_buffered_session_streams == 1024
    assert limits.max_id_length == 1024
    assert limits.max_request_body_bytes == 16 * 1024 * 1024  # TS DEFAULT_MAX_REQUEST_BODY_BYTES
    assert limits.idle_timeout == 900.0 and limits.max_connections == 4096
    with pytest.raises(ValueError, match="max_id_length"):
        remote.RemoteLimits(max_id_length=0)
    with pytest.raises(AttributeError):
        limits.max_id_length = 5  # type: ignore[misc]


async def _new_session(http: httpx.AsyncClient, conn: Mapping[str, str], id_: int) -> str:
    """session/new, its answer read from the connection stream."""
    async with http.stream("GET", "/acp", headers={**conn, **SSE}) as stream:
        assert (
            await http.post("/acp", json=rpc(id_, "session/new", NEW), headers=conn)
        ).status_code == 202
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                session: str = json.loads(line[6:])["result"]["sessionId"]
                return session
    raise AssertionError("no answer")


async def _gone(http: httpx.AsyncClient, conn: Mapping[str, str]) -> None:
    for _ in range(200):
        if (
            await http.post("/acp", json=rpc(99, "session/list", {}), headers=conn)
        ).status_code == 404:
            return
        await asyncio.sleep(0.05)
    pytest.fail("the connection was not cut off")


async def test_client_that_stops_reading_is_cut_off_http() -> None:
    agent = EchoAgent()
    limits = remote.RemoteLimits(max_buffered_bytes=64 * 1024, max_output_stall=0.5)
    app = remote.acp_asgi_app(agent, limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        session = await _new_session(http, conn, 1)
        scoped = {**conn, "Acp-Session-Id": session}
        flood = rpc(
            2,
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "flood 100000"}]},
        )
        assert (await http.post("/acp", json=flood, headers=scoped)).status_code == 202
        # nobody reads the session stream: at most the limit is held, then the stall cuts it off
        await _gone(http, conn)
        assert app.registry.connections == {}
        assert agent.flood_failed, "the agent was not stopped"


class RawWebSocket:
    """A minimal WebSocket client on a plain socket, so that it can really stop reading."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host_port: str) -> RawWebSocket:
        host, port = host_port.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET /acp HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return cls(reader, writer)

    def send(self, message: dict[str, object]) -> None:
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        assert len(payload) < 65536
        head = (
            bytes([0x81, 0x80 | 126]) + struct.pack("!H", len(payload))
            if len(payload) > 125
            else bytes([0x81, 0x80 | len(payload)])
        )
        self.writer.write(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    async def recv(self) -> dict[str, object]:
        first, second = await self.reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        data = await self.reader.readexactly(size)
        assert first & 0x0F == 1, first
        parsed: dict[str, object] = json.loads(data)
        return parsed


async def send_a_prompt(ws: RawWebSocket, block: dict[str, Any]) -> None:
    """Initialize, open a session and send one `session/prompt` of `block` (its output unread)."""
    ws.send(INIT)
    await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
    ws.send(rpc(1, "session/new", NEW))
    answer = await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
    session = answer["result"]["sessionId"]  # type: ignore[index]
    ws.send(rpc(2, "session/prompt", {"sessionId": session, "prompt": [block]}))


async def test_client_that_stops_reading_is_cut_off_websocket() -> None:
    agent = EchoAgent()
    limits = remote.RemoteLimits(max_buffered_bytes=64 * 1024, max_output_stall=0.5)
    app = remote.acp_asgi_app(agent, limits=limits)
    async with uvicorn_server(app) as base:
        ws = await RawWebSocket.open(base)
        try:
            await send_a_prompt(ws, {"type": "text", "text": "flood 1000000"})
            for _ in range(400):  # this client reads no more: the server gives up on it
                if agent.flood_failed:
                    break
                await asyncio.sleep(0.05)
            assert agent.flood_failed, "the agent was not stopped"
            assert app.registry.connections == {}
        finally:
            ws.writer.close()


async def test_session_streams_without_a_reader_are_limited() -> None:
    app = remote.acp_asgi_app(
        EchoAgent(), limits=remote.RemoteLimits(max_buffered_session_streams=2)
    )
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        for n in range(3):  # each prompt's output waits on a session stream nobody opened
            session = await _new_session(http, conn, 10 + n)
            body = rpc(
                20 + n,
                "session/prompt",
                {"sessionId": session, "prompt": [{"type": "text", "text": "x"}]},
            )
            status = (
                await http.post("/acp", json=body, headers={**conn, "Acp-Session-Id": session})
            ).status_code
            assert status in (202, 404)
        await _gone(http, conn)


async def test_id_length_body_size_and_connection_count() -> None:
    limits = remote.RemoteLimits(max_id_length=40, max_request_body_bytes=2048, max_connections=1)
    app = remote.acp_asgi_app(EchoAgent(), limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        too_big = {**INIT, "params": {**INIT["params"], "_meta": {"pad": "x" * 4096}}}  # type: ignore[dict-item]
        assert (await http.post("/acp", json=too_big)).status_code == 413
        conn = {"Acp-Connection-Id": await initialize(http)}
        assert (await http.post("/acp", json=INIT)).status_code == 503  # max_connections
        assert (
            await http.post(
                "/acp", json=rpc(1, "session/list", {}), headers={"Acp-Connection-Id": "c" * 41}
            )
        ).status_code == 400
        long_session = {**conn, "Acp-Session-Id": "s" * 41}
        body = rpc(1, "session/prompt", {"sessionId": "s" * 41, "prompt": []})
        assert (await http.post("/acp", json=body, headers=long_session)).status_code == 400
        assert (await http.get("/acp", headers={**long_session, **SSE})).status_code == 400
        long_id = {"jsonrpc": "2.0", "id": "i" * 41, "method": "session/list", "params": {}}
        assert (await http.post("/acp", json=long_id, headers=conn)).status_code == 400
        with pytest.raises(InvalidStatus) as refused:
            await ws_connect(f"ws://{base}/acp")
        assert refused.value.response.status_code == 503


async def test_idle_connections_are_closed() -> None:
    app = remote.acp_asgi_app(EchoAgent(), limits=remote.RemoteLimits(idle_timeout=0.3))
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        await asyncio.sleep(0.6)
        assert (
            await http.post("/acp", json=rpc(1, "session/list", {}), headers=conn)
        ).status_code == 404
        async with ws_connect(f"ws://{base}/acp") as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)


async def test_foreign_origin_is_refused() -> None:
    app = remote.acp_asgi_app(EchoAgent(), allowed_origins=["http://editor.example"])
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        # a DNS-rebinding page: its Host header is ours, its Origin is not
        evil = {"Origin": "http://evil.example", "Host": base}
        assert (await http.post("/acp", json=INIT, headers=evil)).status_code == 403
        assert (await http.get("/acp", headers={**evil, **SSE})).status_code == 403
        with pytest.raises(InvalidStatus) as refused:
            await ws_connect(f"ws://{base}/acp", origin="http://evil.example")  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403
        allowed = await http.post("/acp", json=INIT, headers={"Origin": "http://editor.example"})
        assert allowed.status_code == 200
        async with ws_connect(f"ws://{base}/acp", origin="http://editor.example") as ws:  # type: ignore[arg-type]
            assert ws.response.headers["acp-connection-id"]


async def test_authentication_hook_and_no_cross_connection_access() -> None:
    seen: list[dict[str, str]] = []

    async def authenticate(headers: Mapping[str, str]) -> str | None:
        seen.append(dict(headers))
        token = headers.get("authorization", "")
        return token.removeprefix("Bearer ") if token.startswith("Bearer user-") else None

    app = remote.acp_asgi_app(EchoAgent(), authenticate=authenticate)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        assert (await http.post("/acp", json=INIT)).status_code == 401
        assert (
            await http.post("/acp", json=INIT, headers={"Authorization": "Bearer nobody"})
        ).status_code == 401
        assert app.registry.connections == {}  # refused before initialize reached an agent
        with pytest.raises(InvalidStatus) as refused:
            await ws_connect(f"ws://{base}/acp")
        assert refused.value.response.status_code == 401
        alice, bob = {"Authorization": "Bearer user-alice"}, {"Authorization": "Bearer user-bob"}
        http.headers.update(alice)
        conn_a = {"Acp-Connection-Id": await initialize(http), **alice}
        assert seen[-1]["authorization"] == "Bearer user-alice"
        session_a = await _new_session(http, conn_a, 1)
        http.headers.update(bob)
        conn_b = {"Acp-Connection-Id": await initialize(http), **bob}
        # bob cannot use alice's connection, not even with its id
        stolen = {**conn_a, **bob}
        assert (await http.get("/acp", headers={**stolen, **SSE})).status_code == 404
        assert (
            await http.post("/acp", json=rpc(5, "session/list", {}), headers=stolen)
        ).status_code == 404
        assert (await http.delete("/acp", headers=stolen)).status_code == 404
        # nor alice's session on his own connection
        scoped = {**conn_b, "Acp-Session-Id": session_a}
        body = rpc(
            6, "session/prompt", {"sessionId": session_a, "prompt": [{"type": "text", "text": "x"}]}
        )
        assert (await http.post("/acp", json=body, headers=scoped)).status_code == 404
        assert (await http.get("/acp", headers={**scoped, **SSE})).status_code == 404
        resume = rpc(7, "session/resume", {"sessionId": session_a, "cwd": "/"})
        assert (
            await http.post("/acp", json=resume, headers=scoped)
        ).status_code == 404  # held by alice
        # alice's connection still works
        ok = await http.post("/acp", json=rpc(8, "session/list", {}), headers=conn_a)
        assert ok.status_code == 202


async def test_session_of_one_websocket_is_not_usable_from_another() -> None:
    async with (
        uvicorn_server(remote.acp_asgi_app(EchoAgent())) as base,
        ws_connect(f"ws://{base}/acp") as one,
        ws_connect(f"ws://{base}/acp") as two,
    ):
        for ws in (one, two):
            await ws.send(json.dumps(INIT))
            await ws.recv()
        await one.send(json.dumps(rpc(1, "session/new", NEW)))
        session = json.loads(await one.recv())["result"]["sessionId"]
        await two.send(json.dumps(rpc(2, "session/prompt", {"sessionId": session, "prompt": []})))
        answer = json.loads(await asyncio.wait_for(two.recv(), STEP_TIMEOUT))
        assert answer["id"] == 2 and answer["error"]["code"] == -32600
        assert "Unknown session" in answer["error"]["message"]
        await two.send(json.dumps(rpc(3, "session/resume", {"sessionId": session, "cwd": "/"})))
        assert "error" in json.loads(await asyncio.wait_for(two.recv(), STEP_TIMEOUT))


async def test_body_json_content_type_with_charset_is_accepted() -> None:
    async with (
        uvicorn_server(remote.acp_asgi_app(EchoAgent())) as base,
        httpx.AsyncClient(base_url=f"http://{base}") as http,
    ):
        response = await http.post(
            "/acp",
            content=json.dumps(INIT),
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        assert response.status_code == 200
        assert JSON["Content-Type"] == "application/json"


async def test_input_the_agent_does_not_read_is_bounded() -> None:
    async def deaf_agent(reader: Any, writer: Any) -> None:
        first = await reader.read(65536)  # initialize, answered; then nothing is read again
        assert b'"initialize"' in first
        writer.write(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}\n')
        await asyncio.Event().wait()

    limits = remote.RemoteLimits(max_buffered_bytes=4096, max_output_stall=0.3)
    app = remote.acp_asgi_app(lambda: deaf_agent, limits=limits)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        note = {"jsonrpc": "2.0", "method": "_vendor/note", "params": {"pad": "x" * 1024}}
        statuses = [
            (await http.post("/acp", json=note, headers=conn)).status_code for _ in range(10)
        ]
        assert statuses[:3] == [202, 202, 202] and statuses[-1] == 404, statuses
        assert app.registry.connections == {}


FRAME = 2048  # more than one flood chunk's frame: what may be admitted while below the limit


async def _watch_buffered(app: remote.RemoteApp, seconds: float) -> list[int]:
    """The connection's buffered output bytes, sampled every 10 ms."""
    samples: list[int] = []
    for _ in range(int(seconds / 0.01)):
        samples.extend(c.buffered for c in app.registry.connections.values())
        await asyncio.sleep(0.01)
    return samples


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_buffered_output_limit_alone_bounds_a_client_that_stops_reading(
    transport: str,
) -> None:
    """The stall timeout is far away: only the buffered-bytes limit acts. The agent is held at
    the limit (the reference's backpressure), the server never holds more than the limit plus
    the frame admitted below it, and the connection ends only when the client leaves."""
    agent = EchoAgent()
    limit = 64 * 1024
    limits = remote.RemoteLimits(max_buffered_bytes=limit, max_output_stall=600.0)
    app = remote.acp_asgi_app(agent, limits=limits)
    flood = {"type": "text", "text": "flood 100000"}  # about 100 MiB if nothing held it back
    async with uvicorn_server(app) as base:
        if transport == "http":
            async with httpx.AsyncClient(base_url=f"http://{base}") as http:
                conn = {"Acp-Connection-Id": await initialize(http)}
                session = await _new_session(http, conn, 1)
                body = rpc(2, "session/prompt", {"sessionId": session, "prompt": [flood]})
                scoped = {**conn, "Acp-Session-Id": session}
                assert (await http.post("/acp", json=body, headers=scoped)).status_code == 202
                samples = await _watch_buffered(app, 1.5)  # nobody reads the session stream
                assert len(app.registry.connections) == 1 and not agent.flood_failed
                assert (await http.delete("/acp", headers=conn)).status_code in (200, 202, 204)
        else:
            ws = await RawWebSocket.open(base)
            try:
                await send_a_prompt(ws, flood)
                samples = await _watch_buffered(app, 1.5)  # this client reads no more
                assert len(app.registry.connections) == 1 and not agent.flood_failed
            finally:
                ws.writer.close()
        for _ in range(200):  # the client left: the agent is freed
            if agent.flood_failed and not app.registry.connections:
                break
            await asyncio.sleep(0.05)
    assert agent.flood_failed and not app.registry.connections
    assert max(samples) >= limit - FRAME, max(samples)  # the output did reach the limit
    assert max(samples) <= limit + FRAME, max(samples)  # and never grew past it
    assert samples[-1] == max(samples[len(samples) // 2 :])  # held there, not drained
