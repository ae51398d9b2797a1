"""The output stall alone cuts off a client that stops reading: the buffered-output limit is far
away (the agent's whole output fits in it, so the agent never waits), and the server is blocked
in sending to a socket nobody reads. WebSocket (the pump) and an SSE session stream, each over
raw sockets on a real uvicorn so that the client can really stop reading. Also the other timer
of a stream, its keep-alive, and the routing of the runtime's notifications without parsing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.remote.support import STEP_TIMEOUT, EchoAgent, remote, uvicorn_server
from tests.remote.test_limits import RawWebSocket, _gone, _new_session, send_a_prompt
from tests.remote.test_routing import initialize, rpc

FLOOD = {"type": "text", "text": "flood 20000"}  # 20 MiB: more than loopback socket buffers hold
LIMITS = remote.RemoteLimits(max_buffered_bytes=48 * 1024 * 1024, max_output_stall=0.5)


async def _cut_off(app: remote.RemoteApp) -> None:
    for _ in range(int(STEP_TIMEOUT / 0.05)):
        if not app.registry.connections:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the client that stopped reading was not cut off")


async def test_a_websocket_that_stops_reading_is_cut_off_by_the_output_stall() -> None:
    agent = EchoAgent()
    app = remote.acp_asgi_app(agent, limits=LIMITS)
    async with uvicorn_server(app) as base:
        ws = await RawWebSocket.open(base)
        try:
            await send_a_prompt(ws, FLOOD)
            await _cut_off(app)  # this client reads nothing more
            assert not agent.flood_failed, "the buffered-output limit acted, not the stall"
        finally:
            ws.writer.close()


async def test_an_sse_stream_that_stops_reading_is_cut_off_by_the_output_stall() -> None:
    agent = EchoAgent()
    app = remote.acp_asgi_app(agent, limits=LIMITS)
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http)}
        session = await _new_session(http, conn, 1)
        host, port = base.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:  # the session's stream, on a socket that reads its head and nothing after
            writer.write(
                f"GET /acp HTTP/1.1\r\nHost: {base}\r\nAccept: text/event-stream\r\n"
                f"Acp-Connection-Id: {conn['Acp-Connection-Id']}\r\n"
                f"Acp-Session-Id: {session}\r\n\r\n".encode()
            )
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), STEP_TIMEOUT)
            assert head.startswith(b"HTTP/1.1 200"), head
            prompt = rpc(2, "session/prompt", {"sessionId": session, "prompt": [FLOOD]})
            headers = {**conn, "Acp-Session-Id": session, "Content-Type": "application/json"}
            posted = await http.post("/acp", content=json.dumps(prompt), headers=headers)
            assert posted.status_code == 202
            await _gone(http, conn)
            assert not app.registry.connections
            assert not agent.flood_failed, "the buffered-output limit acted, not the stall"
        finally:
            writer.close()


async def test_an_idle_sse_stream_gets_a_keep_alive_each_period(monkeypatch: Any) -> None:
    from acp_runtime.remote import http as http_profile

    monkeypatch.setattr(http_profile, "KEEPALIVE_SECONDS", 0.2)
    app = remote.acp_asgi_app(EchoAgent())
    async with uvicorn_server(app) as base, httpx.AsyncClient(base_url=f"http://{base}") as http:
        conn = {"Acp-Connection-Id": await initialize(http), "Accept": "text/event-stream"}
        comments = 0
        async with http.stream("GET", "/acp", headers=conn) as stream:
            lines = stream.aiter_lines()
            while comments < 3:  # nothing else comes on this stream: each one is the period's
                line = await asyncio.wait_for(anext(lines), STEP_TIMEOUT)
                assert not line.startswith("data:"), line
                comments += line == ": keep-alive"


@pytest.mark.parametrize(
    ("frame", "routed_to"),
    [
        # the runtime's notifications: routed by their session without parsing
        (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","u":{}}}\n', "s1"),
        # everything else is parsed: an escape, an id anywhere, sessionId not first
        (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\\u0031"}}\n', None),
        (b'{"jsonrpc":"2.0","method":"m","params":{"sessionId":"s1"},"id":3}\n', None),
        (b'{"jsonrpc":"2.0","id":3,"method":"m","params":{"sessionId":"s1"}}\n', None),
        (b'{"jsonrpc":"2.0","method":"m","params":{"other":1,"sessionId":"s1"}}\n', None),
        (b'{"jsonrpc":"2.0","method":"m\\"","params":{"sessionId":"s1"}}\n', None),
    ],
)
def test_notification_frames_routed_without_parsing(frame: bytes, routed_to: str | None) -> None:
    from acp_runtime.remote.limits import notification_session_id

    assert notification_session_id(frame) == routed_to
