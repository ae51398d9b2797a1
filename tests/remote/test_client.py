"""Our remote clients (`acp_runtime.remote`) against our ASGI app under uvicorn on
127.0.0.1: a clear error per HTTP failure status, the cookie jar, clean close, and a session
surviving a reconnect through session/resume."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from http.cookiejar import CookieJar
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

SCHEMES = ["ws", "http"]


async def _wait_empty(app: remote.RemoteApp) -> None:
    for _ in range(200):
        if not app.registry.connections:
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"connections left open: {app.registry.connections}")


async def test_websocket_upgrade_failures_are_clear_errors() -> None:
    app = remote.acp_asgi_app(
        EchoAgent(), authenticate=lambda headers: headers.get("authorization") == "Bearer ok"
    )
    async with uvicorn_server(app) as base:
        with pytest.raises(remote.RemoteHttpError) as refused:
            await remote.connect_ws(f"ws://{base}/acp", RecordingClient())
        assert refused.value.status == 401
        assert "HTTP 401, authentication required" in str(refused.value)
        with pytest.raises(remote.RemoteHttpError) as forbidden:
            await remote.connect_ws(
                f"ws://{base}/acp",
                RecordingClient(),
                headers={"Authorization": "Bearer ok", "Origin": "http://evil.example"},
            )
        assert forbidden.value.status == 403 and "Origin" in str(forbidden.value)
        with pytest.raises(ValueError, match="not an ACP endpoint URL"):
            await remote.connect_url(f"ftp://{base}/acp", RecordingClient())


async def test_http_failures_fail_the_request_with_their_status() -> None:
    app = remote.acp_asgi_app(
        EchoAgent(),
        authenticate=lambda headers: headers.get("authorization") == "Bearer ok",
        limits=remote.RemoteLimits(max_request_body_bytes=4096),
    )
    async with uvicorn_server(app) as base:
        peer, connection = await remote.connect_http(f"http://{base}/acp", RecordingClient())
        async with connection:
            with pytest.raises(acp.RpcError) as refused:
                await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
        assert refused.value.data["status"] == 401
        assert "HTTP 401, authentication required" in refused.value.message

        peer, connection = await remote.connect_http(
            f"http://{base}/acp", RecordingClient(), headers={"Authorization": "Bearer ok"}
        )
        async with connection:
            await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
            session = (
                await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)
            ).session_id
            with pytest.raises(acp.RpcError) as too_big:
                await asyncio.wait_for(
                    peer.session_prompt(prompt(session, "x" * 8192)), STEP_TIMEOUT
                )
            assert too_big.value.data["status"] == 413
            assert "larger than the server accepts" in too_big.value.message
            with pytest.raises(acp.RpcError) as foreign:  # a session this connection does not hold
                await asyncio.wait_for(
                    peer.session_prompt(prompt("sess_elsewhere", "hi")), STEP_TIMEOUT
                )
            assert foreign.value.data["status"] == 404
            # neither failure ended the connection
            await asyncio.wait_for(peer.session_prompt(prompt(session, "still here")), STEP_TIMEOUT)


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_cookies_are_kept_and_close_is_clean(scheme: str) -> None:
    cookies_seen: list[str | None] = []

    def authenticate(headers: Mapping[str, str]) -> str:
        cookies_seen.append(headers.get("cookie"))
        return "anyone"

    app = remote.acp_asgi_app(
        EchoAgent(), authenticate=authenticate, affinity_cookie=("lb", "worker-7")
    )
    async with uvicorn_server(app) as base:
        jar = CookieJar()
        for _ in range(2):  # the caller's jar carries the affinity cookie to the reconnect
            client = RecordingClient()
            peer, connection = await remote.connect_url(
                f"{scheme}://{base}/acp", client, cookies=jar
            )
            async with connection:
                await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
                session = (
                    await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)
                ).session_id
                await asyncio.wait_for(peer.session_prompt(prompt(session, "hi")), STEP_TIMEOUT)
                await client.wait_for("idle", lambda c=client, s=session: c.idle(s))  # type: ignore[misc]
            await _wait_empty(app)  # DELETE / close frame: the server let go of the connection
    assert [c.name for c in jar] == ["lb"]
    assert cookies_seen[0] is None
    assert all(c == "lb=worker-7" for c in cookies_seen[1:]), cookies_seen


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_session_survives_reconnect_through_resume(scheme: str) -> None:
    app = remote.acp_asgi_app(EchoAgent())
    async with uvicorn_server(app) as base:
        url = f"{scheme}://{base}/acp"
        first = RecordingClient()
        peer, connection = await remote.connect_url(url, first)
        await connection.__aenter__()
        await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
        session = (await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)).session_id

        # while the first connection holds the session, nobody else may attach it
        intruder = RecordingClient()
        other, other_connection = await remote.connect_url(url, intruder)
        async with other_connection:
            await asyncio.wait_for(other.initialize(init_request()), STEP_TIMEOUT)
            resume = acp.ResumeSessionRequest.from_dict({"sessionId": session, "cwd": "/"})
            with pytest.raises(acp.RpcError):
                await asyncio.wait_for(other.session_resume(resume), STEP_TIMEOUT)
        await connection.close()  # the first client goes away
        await _wait_empty(app)

        second = RecordingClient()
        peer, connection = await remote.connect_url(url, second)
        async with connection:
            await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
            await asyncio.wait_for(peer.session_resume(resume), STEP_TIMEOUT)
            await asyncio.wait_for(
                peer.session_prompt(prompt(session, "welcome back")), STEP_TIMEOUT
            )
            await second.wait_for("idle", lambda: second.idle(session))
            chunks = [e[2] for e in second.events[session] if e[0] == "chunk"]
            assert chunks == ["welcome", "back"]


async def test_requests_fail_when_their_session_stream_ends() -> None:
    class SilentAgent(EchoAgent):
        async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
            await asyncio.Event().wait()  # never answers
            raise AssertionError

    app = remote.acp_asgi_app(SilentAgent())
    cut = asyncio.Event()

    async def proxy(scope: Any, receive: Any, send: Any) -> None:
        # A proxy that drops session-scoped SSE streams once `cut` is set.
        headers = dict(scope.get("headers", ()))
        if scope["type"] != "http" or scope["method"] != "GET" or b"acp-session-id" not in headers:
            await app(scope, receive, send)
            return
        task = asyncio.ensure_future(app(scope, receive, send))
        await cut.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async with uvicorn_server(proxy) as base:
        peer, connection = await remote.connect_http(f"http://{base}/acp", RecordingClient())
        async with connection:
            await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
            session = (
                await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)
            ).session_id
            pending = asyncio.ensure_future(peer.session_prompt(prompt(session, "hi")))
            await asyncio.sleep(0.3)
            cut.set()
            with pytest.raises(acp.RpcError) as failed:
                await asyncio.wait_for(pending, STEP_TIMEOUT)
            assert failed.value.data["status"] == 410, failed.value
