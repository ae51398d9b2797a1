"""Our remote clients meet each HTTP failure status the server side may answer (400, 406, 409,
415, 501, 503): each becomes the clear error the client promises (status, meaning and the
server's body), from a tiny ASGI app that refuses with a given status and from our real app
behind a proxy that refuses one session's stream. Both on a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.remote.support import (
    STEP_TIMEOUT,
    EchoAgent,
    RecordingClient,
    acp,
    init_request,
    new_session,
    prompt,
    remote,
    uvicorn_server,
)

MEANINGS = {
    400: "the server refused the request (missing or mismatched Acp-Connection-Id",
    406: "the server requires Accept: text/event-stream",
    409: "this stream already has a receiver",
    415: "the server requires Content-Type: application/json",
    501: "not supported by the server (JSON-RPC batches)",
    503: "the server is at capacity (too many connections)",
}
BODY = b"refused by the test server"


async def refusing_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers every request to /<status>/acp with that status (WebSocket: a denial response)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    status = int(scope["path"].split("/")[1])
    kind = "http" if scope["type"] == "http" else "websocket.http"
    if kind == "websocket.http":
        await receive()  # websocket.connect
    headers = [(b"content-type", b"text/plain")]
    await send({"type": f"{kind}.response.start", "status": status, "headers": headers})
    await send({"type": f"{kind}.response.body", "body": BODY})


def _assert_clear(message: str, status: int) -> None:
    assert f"HTTP {status}, {MEANINGS[status]}" in message, message
    assert BODY.decode() in message, message


async def test_refused_initialize_over_http_fails_with_a_clear_error() -> None:
    async with uvicorn_server(refusing_app) as base:
        for status in MEANINGS:
            peer, connection = await remote.connect_http(
                f"http://{base}/{status}/acp", RecordingClient()
            )
            async with connection:
                with pytest.raises(acp.RpcError) as refused:
                    await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
            assert refused.value.data["status"] == status
            assert refused.value.data["body"] == BODY.decode()
            _assert_clear(refused.value.message, status)


async def test_refused_websocket_upgrade_is_a_clear_error() -> None:
    async with uvicorn_server(refusing_app) as base:
        for status in MEANINGS:
            url = f"ws://{base}/{status}/acp"
            with pytest.raises(remote.RemoteHttpError) as refused:
                await remote.connect_ws(url, RecordingClient())
            assert refused.value.status == status and refused.value.url == url
            _assert_clear(str(refused.value), status)


async def test_refused_session_stream_fails_its_request_and_the_connection_goes_on() -> None:
    app = remote.acp_asgi_app(EchoAgent())
    refuse: list[int] = []  # the status the proxy answers session streams with, if any

    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        stream = scope["type"] == "http" and scope["method"] == "GET"
        if stream and refuse and b"acp-session-id" in dict(scope["headers"]):
            await send({"type": "http.response.start", "status": refuse[0], "headers": []})
            await send({"type": "http.response.body", "body": BODY})
            return
        await app(scope, receive, send)

    async with uvicorn_server(proxy) as base:
        client = RecordingClient()
        peer, connection = await remote.connect_http(f"http://{base}/acp", client)
        async with connection:
            await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
            for status in MEANINGS:
                refuse[:] = [status]
                refused_session = (
                    await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)
                ).session_id
                with pytest.raises(acp.RpcError) as refused:
                    await asyncio.wait_for(
                        peer.session_prompt(prompt(refused_session, "hi")), STEP_TIMEOUT
                    )
                assert refused.value.data["status"] == status
                _assert_clear(refused.value.message, status)
                refuse.clear()  # none of these statuses ends the connection: a new session works
                session = (
                    await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)
                ).session_id
                await asyncio.wait_for(peer.session_prompt(prompt(session, "fine")), STEP_TIMEOUT)
                await client.wait_for("idle", lambda s=session: client.idle(s))  # type: ignore[misc]
