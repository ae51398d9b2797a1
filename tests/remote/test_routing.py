"""Our ASGI app's routing table (the RFD's) over a real uvicorn on 127.0.0.1, spoken to with raw
HTTP (httpx) and WebSocket (websockets) requests: status codes, headers, streams, cookies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.remote.support import STEP_TIMEOUT, EchoAgent, remote, uvicorn_server

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}},
}
JSON = {"Content-Type": "application/json"}


def rpc(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


async def initialize(http: httpx.AsyncClient) -> str:
    """POST initialize; the connection id."""
    response = await http.post("/acp", json=INIT)
    assert response.status_code == 200, response.text
    assert response.json()["id"] == 0 and "result" in response.json()
    return response.headers["acp-connection-id"]


async def next_event(lines: Any) -> dict[str, Any]:
    """The next SSE `data:` event of a stream's line iterator."""

    async def read() -> dict[str, Any]:
        async for line in lines:
            if line.startswith("data: "):
                parsed: dict[str, Any] = json.loads(line[6:])
                return parsed
        raise AssertionError("stream ended")

    return await asyncio.wait_for(read(), STEP_TIMEOUT)


async def test_streamable_http_routing_table() -> None:
    async with (
        uvicorn_server(remote.acp_asgi_app(EchoAgent())) as base,
        httpx.AsyncClient(base_url=f"http://{base}") as http,
    ):
        assert (
            await http.post(
                "/acp", content=json.dumps(INIT), headers={"Content-Type": "text/plain"}
            )
        ).status_code == 415
        assert (await http.post("/acp", content="{nope", headers=JSON)).status_code == 400
        batch = await http.post("/acp", json=[INIT])
        assert batch.status_code == 501 and batch.json()["error"]["code"] == -32600
        assert (
            await http.post("/acp", json=rpc(1, "session/new", {}))
        ).status_code == 400  # no connection id
        assert (await http.get("/acp", headers={"Accept": "text/event-stream"})).status_code == 400
        assert (await http.delete("/acp")).status_code == 400
        assert (await http.put("/acp", json={})).status_code == 405
        assert (await http.get("/elsewhere")).status_code == 404
        unknown = {"Acp-Connection-Id": "not-a-connection"}
        assert (
            await http.post("/acp", json=rpc(1, "session/new", {}), headers=unknown)
        ).status_code == 404
        assert (
            await http.get("/acp", headers={**unknown, "Accept": "text/event-stream"})
        ).status_code == 404

        response = await http.post("/acp", json=INIT)
        assert (
            response.status_code == 200 and response.headers["content-type"] == "application/json"
        )
        conn = {"Acp-Connection-Id": response.headers["acp-connection-id"]}
        assert "acp_affinity=" in response.headers["set-cookie"]  # affinity for sticky balancing
        assert (
            await http.post("/acp", json=INIT, headers=conn)
        ).status_code == 400  # initialize again
        assert (await http.get("/acp", headers=conn)).status_code == 406  # no text/event-stream
        async with http.stream(
            "GET", "/acp", headers={**conn, "Accept": "text/event-stream"}
        ) as stream:
            assert (
                stream.status_code == 200 and stream.headers["content-type"] == "text/event-stream"
            )
            second = await http.get("/acp", headers={**conn, "Accept": "text/event-stream"})
            assert second.status_code == 409  # one receiver per stream
            lines = stream.aiter_lines()
            assert (
                await http.post(
                    "/acp", json=rpc(1, "session/new", {"cwd": "/", "mcpServers": []}), headers=conn
                )
            ).status_code == 202
            created = await next_event(lines)  # session/new's answer: on the connection stream
            session = created["result"]["sessionId"]
            prompt = rpc(
                2,
                "session/prompt",
                {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]},
            )
            assert (
                await http.post("/acp", json=prompt, headers=conn)
            ).status_code == 400  # no Acp-Session-Id
            other = {**conn, "Acp-Session-Id": "sess_other"}
            assert (
                await http.post("/acp", json=prompt, headers=other)
            ).status_code == 400  # mismatch
            scoped = {**conn, "Acp-Session-Id": session}
            async with http.stream(
                "GET", "/acp", headers={**scoped, "Accept": "text/event-stream"}
            ) as s_stream:
                s_lines = s_stream.aiter_lines()
                assert (await http.post("/acp", json=prompt, headers=scoped)).status_code == 202
                seen = [await next_event(s_lines) for _ in range(5)]
                # session updates and the prompt's answer arrive on the session stream
                assert {m.get("method") for m in seen[:1]} == {"session/update"}
                assert any(m.get("id") == 2 and "result" in m for m in seen), seen
                assert (await http.delete("/acp", headers=conn)).status_code == 202
                async for _ in s_lines:  # the stream ends with the connection
                    pass
        assert (await http.post("/acp", json=prompt, headers=scoped)).status_code == 404
        assert (await http.delete("/acp", headers=conn)).status_code == 404


async def test_websocket_upgrade_and_frames() -> None:
    async with uvicorn_server(remote.acp_asgi_app(EchoAgent())) as base:
        async with ws_connect(f"ws://{base}/acp") as ws:
            assert ws.response.headers["acp-connection-id"]  # in the 101 response
            assert "acp_affinity=" in ws.response.headers["set-cookie"]
            await ws.send(b"\x00binary frames are ignored")
            await ws.send(json.dumps(INIT))
            answer = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
            assert answer["id"] == 0 and "result" in answer
            await ws.send(json.dumps(INIT))  # a second initialize is refused, the socket stays
            refused = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
            assert refused["id"] == 0 and refused["error"]["code"] == -32600
            await ws.send("[]")  # a batch: the runtime's own Invalid Request answer
            assert (
                json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))["error"]["code"]
                == -32600
            )
        async with ws_connect(f"ws://{base}/acp") as ws:
            await ws.send(json.dumps(rpc(1, "session/new", {})))  # not initialize first
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), STEP_TIMEOUT)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1002
        with pytest.raises(InvalidStatus):
            await ws_connect(f"ws://{base}/elsewhere")
