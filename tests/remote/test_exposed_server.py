"""`serve_remote` as an operator runs it (its own process, uvicorn and hypercorn) against hostile
peers, the quick cases (issue 32): silent and slow sockets closed, SIGTERM ends the server whatever
its clients do (exit 0), log lines rate-limited. Slow and flood cases: test_hostile.py."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import connect as ws_connect

from tests.remote.hostile_kit import INIT, closed_within, server_process

SERVERS = [pytest.param(False, id="uvicorn"), pytest.param(True, id="hypercorn")]
BOUND = 10.0  # seconds any socket may outlive header_timeout here (a test bound, not a figure)


@pytest.mark.parametrize("http2", SERVERS)
async def test_silent_and_slow_sockets_are_closed(tmp_path: Path, http2: bool) -> None:
    async with server_process(tmp_path, http2=http2, limits={"header_timeout": 0.5}) as server:
        silent = await asyncio.open_connection("127.0.0.1", server.port)
        slow_reader, slow = await asyncio.open_connection("127.0.0.1", server.port)
        slow.write(b"POST /acp HTTP/1.1\r\nHost: x\r\n")

        async def drip() -> None:  # one header line at a time, never the end of the head
            for n in range(10 * int(BOUND)):
                slow.write(f"X-Drip-{n}: 1\r\n".encode())
                await asyncio.sleep(0.1)

        dripping = asyncio.create_task(drip())
        try:
            assert await closed_within(silent[0], BOUND), "a silent socket was kept open"
            assert await closed_within(slow_reader, BOUND), "a slow request head was kept open"
        finally:
            dripping.cancel()
            silent[1].close()
            slow.close()
        # a legitimate client is still served
        async with ws_connect(f"ws://{server.base}/acp") as ws:
            await ws.send(json.dumps(INIT))
            assert "result" in json.loads(await asyncio.wait_for(ws.recv(), BOUND))


@pytest.mark.parametrize("http2", SERVERS)
async def test_sigterm_ends_the_server_whatever_its_clients_do(tmp_path: Path, http2: bool) -> None:
    limits = {"shutdown_timeout": 2.0, "setup_timeout": 60.0}
    async with server_process(tmp_path, "hang", http2=http2, limits=limits) as server:
        host, port = server.base.split(":")
        # an initialize the agent never answers, a WebSocket waiting on one, an idle socket
        reader, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps(INIT).encode()
        writer.write(
            b"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        ws = await ws_connect(f"ws://{server.base}/acp")
        await ws.send(json.dumps(INIT))
        idle = await asyncio.open_connection(host, int(port))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(server.process.wait, 2.0 + BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {time.monotonic() - started:.1f} s after SIGTERM")
        finally:
            writer.close()
            idle[1].close()
            await ws.close()
        assert code == 0, server.log()
        assert b"HTTP/1.1" in await reader.read(-1)  # the pending initialize was answered


@pytest.mark.parametrize("http2", SERVERS)
async def test_log_lines_are_rate_limited(tmp_path: Path, http2: bool) -> None:
    async with server_process(tmp_path, http2=http2) as server:
        for _ in range(200):  # each a bad first WebSocket frame: one warning each, unlimited
            async with ws_connect(f"ws://{server.base}/acp") as ws:
                await ws.send("not an initialize")
                await ws.wait_closed()
        log = server.log()
    warned = log.count("first ACP WebSocket message must be an initialize request")
    assert 1 <= warned <= 20, warned
