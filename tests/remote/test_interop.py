"""Interop with the reference TypeScript SDK 2.4.0 over real sockets on 127.0.0.1, both ways.

* Our `connect_ws` / `connect_http` (`acp_runtime.remote`) drive the SDK's
  `AcpServer` (tests/remote/ts_server.mjs, node's http server + `ws`).
* The SDK's `ws-client` / `http-client` (tests/remote/ts_client.mjs) drive our ASGI app under
  uvicorn.

Each run: the full prompt lifecycle with streaming, a permission request and cancellation, on
two sessions of one connection at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.remote.support import (
    REMOTE_DIR,
    STEP_TIMEOUT,
    EchoAgent,
    RecordingClient,
    init_request,
    new_session,
    prompt,
    remote,
    uvicorn_server,
)

PERMISSION_LIFECYCLE = [
    ("state", "running", None),
    ("state", "requires_action", None),
    ("permission", "Run the pretend tool?"),
    ("state", "running", None),
    ("chunk", "m_perm", "selected:allow"),
    ("chunk", "m_echo", "ask"),
    ("chunk", "m_echo", "permission"),
    ("chunk", "m_echo", "then"),
    ("chunk", "m_echo", "echo"),
    ("state", "idle", "end_turn"),
]
SLOW = " ".join(["slow"] * 60)


@contextlib.asynccontextmanager
async def ts_server(node: str) -> AsyncIterator[str]:
    """The SDK's AcpServer on 127.0.0.1; yields host:port."""
    process = await asyncio.create_subprocess_exec(
        node,
        str(REMOTE_DIR / "ts_server.mjs"),
        cwd=REMOTE_DIR,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), STEP_TIMEOUT)
        yield f"127.0.0.1:{json.loads(line)['port']}"
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


def _plain(events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [
        tuple(str(x) if x is not None and not isinstance(x, str) else x for x in e) for e in events
    ]


async def _drive(url: str) -> tuple[RecordingClient, list[str]]:
    """Our client through the three phases (see ts_client.mjs) on two sessions at once."""
    client = RecordingClient()
    peer, connection = await remote.connect_url(url, client)
    async with connection:
        init = await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
        assert init.protocol_version == 2
        a = (await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)).session_id
        b = (await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)).session_id
        assert a != b

        # 1. a permission round trip on both sessions at once
        text = "ask permission then echo"
        await asyncio.gather(
            peer.session_prompt(prompt(a, text)), peer.session_prompt(prompt(b, text))
        )
        await client.wait_for("both idle", lambda: client.idle(a) and client.idle(b))
        for session in (a, b):
            assert _plain(client.events[session][1:]) == PERMISSION_LIFECYCLE, client.events
            client.events[session].clear()

        # 2. streaming on both; A cancelled after three chunks, B runs to the end
        three = asyncio.Event()
        client.on_chunk = lambda s: three.set() if s == a and len(client.events[a]) >= 5 else None
        await asyncio.gather(
            peer.session_prompt(prompt(a, SLOW)), peer.session_prompt(prompt(b, SLOW))
        )
        await asyncio.wait_for(three.wait(), STEP_TIMEOUT)
        await peer.session_cancel(remote_cancel(a))
        await client.wait_for("both idle", lambda: client.idle(a) and client.idle(b))
        chunks_a = [e for e in client.events[a] if e[0] == "chunk"]
        chunks_b = [e for e in client.events[b] if e[0] == "chunk"]
        assert 3 <= len(chunks_a) < 60, client.events[a]
        assert _plain(client.events[a][-1:]) == [("state", "idle", "cancelled")]
        assert len(chunks_b) == 60 and _plain(client.events[b][-1:]) == [
            ("state", "idle", "end_turn")
        ]
        client.on_chunk = None
        client.events[a].clear()

        # 3. a permission request nobody answers, withdrawn by session/cancel
        client.undecided = True
        await peer.session_prompt(prompt(a, "permission please"))
        await client.wait_for(
            "the permission request",
            lambda: ("permission", "Run the pretend tool?") in client.events[a],
        )
        await peer.session_cancel(remote_cancel(a))
        await client.wait_for(
            "idle and the permission withdrawn",
            lambda: client.idle(a) and ("permission_withdrawn",) in client.events[a],
        )
        assert ("state", "idle", "cancelled") in _plain(client.events[a][-2:]), client.events[a]
    return client, [a, b]


def remote_cancel(session_id: str) -> Any:
    """session/cancel for one session."""
    from tests.remote.support import acp

    return acp.CancelSessionNotification.from_dict({"sessionId": session_id})


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_our_client_drives_ts_acp_server(node: str, scheme: str) -> None:
    async with ts_server(node) as base:
        _, sessions = await _drive(f"{scheme}://{base}/acp")
    assert all(s.startswith("sess_ts_") for s in sessions)


@pytest.mark.parametrize("transport", ["ws", "http"])
async def test_ts_client_drives_our_asgi_server(node: str, transport: str) -> None:
    app = remote.acp_asgi_app(EchoAgent())
    async with uvicorn_server(app) as base:
        scheme = "ws" if transport == "ws" else "http"
        process = await asyncio.create_subprocess_exec(
            node,
            str(REMOTE_DIR / "ts_client.mjs"),
            transport,
            f"{scheme}://{base}/acp",
            cwd=REMOTE_DIR,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(process.communicate(), 90)
    record = json.loads(out.decode().strip().splitlines()[-1])
    assert record["ok"], record
    assert record["initialize"]["info"] == {"name": "py-echo-agent", "version": "1.0"}
    a, b = record["sessions"]
    ev = {s: [tuple(e) for e in record["events"][s]] for s in (a, b)}
    # phase 1 on both sessions: the same lifecycle as ours
    for s in (a, b):
        first = ev[s][1 : 1 + len(PERMISSION_LIFECYCLE)]
        assert first == [tuple(x) for x in PERMISSION_LIFECYCLE], ev[s]
    # phase 2: A cancelled part way, B complete
    idles_a = [i for i, e in enumerate(ev[a]) if e[:2] == ("state", "idle")]
    phase2_a = ev[a][idles_a[0] + 1 : idles_a[1] + 1]
    assert phase2_a[-1] == ("state", "idle", "cancelled"), ev[a]
    assert 3 <= sum(e[0] == "chunk" for e in phase2_a) < 60
    idles_b = [i for i, e in enumerate(ev[b]) if e[:2] == ("state", "idle")]
    phase2_b = ev[b][idles_b[0] + 1 : idles_b[1] + 1]
    assert sum(e[0] == "chunk" for e in phase2_b) == 60 and phase2_b[-1] == (
        "state",
        "idle",
        "end_turn",
    )
    # phase 3: the pending permission request was withdrawn ($/cancel_request aborted it)
    phase3_a = ev[a][idles_a[1] + 1 :]
    assert ("permission_answered", "aborted") in phase3_a, ev[a]
    assert ("state", "idle", "cancelled") in phase3_a[-2:], ev[a]  # either order with the abort
    # phases 1 and 3 asked A twice, B once
    assert record["permissions"].count(a) == 2 and record["permissions"].count(b) == 1
