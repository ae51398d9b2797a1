"""Our HTTP client against a hostile agent (issue 32, requirement 4): response bodies, error
bodies, SSE lines and session streams are bounded by ``ClientLimits``, with clear errors.

Each scenario would, without its bound, make the client read (and hold) without end or open a
stream per session the agent names; the agent (``hostile_agent_http``) is a raw HTTP server on a
real 127.0.0.1 socket. The issue's own figures (300 MB bodies, 3,000 sessions, the client's
peak memory) are measured by ``tests/reliability/test_hostile_clients_slow.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from acp_runtime import jsonrpc, remote

from tests.remote.hostile_agent_http import Scenario, hostile_agent

TIMEOUT = 20.0
LIMITS = remote.ClientLimits(
    max_message_bytes=1 << 20, max_error_body_bytes=16 * 1024, max_session_streams=4
)
INIT = {"protocolVersion": 2, "clientCapabilities": {}}


@asynccontextmanager
async def client(url: str, limits: remote.ClientLimits = LIMITS) -> AsyncIterator[Any]:
    """A raw JSON-RPC connection over our HTTP client (the generated packages' transport)."""
    pipe, sink = await remote.open_http(url, client_limits=limits)
    connection = jsonrpc.Connection(object(), {}, pipe, sink)
    async with connection:
        yield connection


async def test_an_initialize_body_with_no_end_fails_it_at_the_limit() -> None:
    scenario = Scenario(initialize="endless")
    async with hostile_agent(scenario) as url, client(url) as connection:
        with pytest.raises(jsonrpc.RpcError) as refused:
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
    assert "is over 1048576 bytes (ClientLimits.max_message_bytes)" in refused.value.message
    assert scenario.sent_bytes < 64 << 20  # the client stopped reading at the limit


async def test_a_declared_oversized_body_is_refused_before_reading_it() -> None:
    scenario = Scenario(initialize="declared")
    async with hostile_agent(scenario) as url, client(url) as connection:
        with pytest.raises(jsonrpc.RpcError, match="max_message_bytes"):
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)


async def test_an_error_body_with_no_end_is_read_only_up_to_its_limit() -> None:
    scenario = Scenario(initialize="error")
    async with hostile_agent(scenario) as url, client(url) as connection:
        with pytest.raises(jsonrpc.RpcError) as refused:
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
    assert "HTTP 500" in refused.value.message
    assert len(refused.value.data["body"]) <= 8 * 1024
    assert scenario.sent_bytes < 64 << 20


async def test_an_error_body_is_quoted_as_one_line_of_visible_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acp_runtime.remote")
    async with hostile_agent(Scenario(initialize="escapes")) as url, client(url) as connection:
        with pytest.raises(jsonrpc.RpcError) as refused:
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
    logged = [r.getMessage() for r in caplog.records]
    for text in (refused.value.message, *logged):
        assert "\x1b" not in text and "\x07" not in text and "\n" not in text, text
    assert "\\x1b]52;c;aGk=\\x07\\nFAKE LINE\\x1b[2J" in refused.value.message


async def test_an_sse_line_with_no_end_ends_the_connection_with_a_clear_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acp_runtime.remote")
    scenario = Scenario(stream="endless-line")
    async with hostile_agent(scenario) as url, client(url) as connection:
        await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(connection.request("session/new", {"cwd": "/"}, None), TIMEOUT)
    assert any(
        "an SSE line is over 1048576 bytes (ClientLimits.max_message_bytes)" in r.getMessage()
        for r in caplog.records
    )
    assert scenario.sent_bytes < 64 << 20


async def test_sessions_named_by_the_agent_open_at_most_max_session_streams() -> None:
    scenario = Scenario(sessions=50)
    async with hostile_agent(scenario) as url, client(url) as connection:
        await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
        await asyncio.wait_for(connection.request("x/ping", {}, None), TIMEOUT)
        async with asyncio.timeout(TIMEOUT):  # the streams the client opens reach the agent
            while len(scenario.session_gets) < LIMITS.max_session_streams:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # room for any further one to arrive
        assert len(scenario.session_gets) == LIMITS.max_session_streams
        # A session of the client's own past the limit: the least recently used idle stream
        # makes room, and the message goes out on its session.
        await asyncio.wait_for(connection.notify("session/cancel", {"sessionId": "mine"}), TIMEOUT)
        async with asyncio.timeout(TIMEOUT):
            while scenario.posted[-1].get("method") != "session/cancel":
                await asyncio.sleep(0.02)
        assert "mine" in scenario.session_gets
        assert scenario.most_session_streams <= LIMITS.max_session_streams


async def test_a_post_left_unanswered_fails_its_request_and_ends_the_connection() -> None:
    scenario = Scenario(initialize="silent")
    limits = remote.ClientLimits(request_timeout=0.5)
    async with hostile_agent(scenario) as url, client(url, limits) as connection:
        with pytest.raises(jsonrpc.RpcError) as refused:
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
        await asyncio.wait_for(connection.wait_closed(), TIMEOUT)
    assert "no answer within 0.5 s (ClientLimits.request_timeout)" in refused.value.message


async def test_a_silent_stream_ends_the_connection_only_when_told_to(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the quiet agent sends no event and no keep-alive on the connection stream
    for idle in (None, 0.5):
        scenario = Scenario(stream="quiet")
        limits = remote.ClientLimits(stream_idle_timeout=idle)
        async with hostile_agent(scenario) as url, client(url, limits) as connection:
            await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
            closed = asyncio.ensure_future(connection.wait_closed())
            done, _ = await asyncio.wait([closed], timeout=1.5 if idle is None else TIMEOUT)
            assert bool(done) is (idle is not None), idle
            closed.cancel()
    assert "no event for 0.5 s (ClientLimits.stream_idle_timeout)" in caplog.text


def test_client_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="ClientLimits.max_session_streams"):
        remote.ClientLimits(max_session_streams=0)
    for bad in (0, -1.0, float("nan"), float("inf"), True, "5"):
        with pytest.raises(ValueError, match="ClientLimits.request_timeout must be a positive"):
            remote.ClientLimits(request_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ClientLimits.stream_idle_timeout"):
        remote.ClientLimits(stream_idle_timeout=0)
    assert remote.ClientLimits().stream_idle_timeout is None  # silent streams are allowed


async def test_a_websocket_message_over_the_limit_ends_the_connection() -> None:
    from websockets.asyncio.server import serve

    async def hostile(ws: Any) -> None:
        await ws.recv()  # initialize
        await ws.send('{"jsonrpc":"2.0","id":0,"result":"' + "x" * (2 << 20) + '"}')
        await ws.wait_closed()

    async with serve(hostile, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        pipe, sink = await remote.open_ws(f"ws://127.0.0.1:{port}/acp", client_limits=LIMITS)
        async with jsonrpc.Connection(object(), {}, pipe, sink) as connection:
            with pytest.raises(ConnectionError):
                await asyncio.wait_for(connection.request("initialize", INIT, None), TIMEOUT)
