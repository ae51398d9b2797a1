"""`serve_remote`'s event loop and WebSocket protocol (`remote.uvicorn_ws`), each through a real
server process: the loop asked for is the one agents run on, the frames of one turn leave in a
few TCP segments instead of one per frame, a WebSocket holds less memory than under uvicorn's own
protocol, permessage-deflate is declined unless asked for, the protocol's light queue and flag
behave as asyncio's, and a uvicorn whose class lacks what the protocol builds on gets its own."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import struct
import sys
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest
from acp_runtime.remote.uvicorn_ws import SEND_MANY, Flag, Inbox
from websockets.asyncio.client import ClientConnection, connect

from tests.remote.support import GENERATED, ROOT, STEP_TIMEOUT, EchoAgent, remote
from tests.remote.test_serve import _free_port, _listening

UVLOOP = importlib.util.find_spec("uvloop") is not None
LOOPS = [
    "asyncio",
    pytest.param("uvloop", marks=pytest.mark.skipif(not UVLOOP, reason="no uvloop")),
]


@contextlib.asynccontextmanager
async def serving(
    script: str, port: int, stderr: int | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Run ``script`` (which calls ``serve_remote`` on ``port``) until the block ends."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(GENERATED)])}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(script),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
    )
    try:
        await _listening(port)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await asyncio.wait_for(process.wait(), 10)


async def request(ws: ClientConnection, request_id: int, method: str, params: Any) -> Any:
    """Send a request; its result (notifications before it are skipped)."""
    await ws.send(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    )
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
        if message.get("id") == request_id and "method" not in message:
            assert "result" in message, message
            return message["result"]


async def open_session(port: int) -> tuple[ClientConnection, str]:
    """A WebSocket, initialized, with one session."""
    ws = await connect(f"ws://127.0.0.1:{port}/acp", compression=None)
    info = {"name": "test", "version": "1"}
    await request(ws, 1, "initialize", {"protocolVersion": 2, "info": info, "capabilities": {}})
    created = await request(ws, 2, "session/new", {"cwd": "/", "mcpServers": []})
    return ws, created["sessionId"]


@pytest.mark.parametrize("loop", LOOPS)
async def test_agents_run_on_the_event_loop_asked_for(loop: str) -> None:
    port = _free_port()
    script = f"""
        import asyncio
        from tests.remote.support import EchoAgent, remote
        def agent():
            print(type(asyncio.get_running_loop()).__module__, flush=True)
            return EchoAgent()
        remote.serve_remote(agent, "127.0.0.1", {port}, log_level="warning", loop={loop!r})
        """
    async with serving(script, port) as process:
        ws, _ = await open_session(port)
        await ws.close()
        assert process.stdout is not None
        module = (await asyncio.wait_for(process.stdout.readline(), STEP_TIMEOUT)).decode()
    assert module.split(".")[0].strip() == loop


def test_an_unknown_loop_is_refused_before_serving() -> None:
    with pytest.raises(ValueError, match="loop must be one of auto, asyncio, uvloop"):
        remote.serve_remote(lambda: None, "127.0.0.1", _free_port(), loop="tokio")  # type: ignore[arg-type, return-value]


@pytest.mark.parametrize("deflate", [False, True])
async def test_permessage_deflate_is_declined_unless_asked_for(deflate: bool) -> None:
    port = _free_port()
    script = f"""
        from tests.remote.support import EchoAgent, remote
        remote.serve_remote(
            EchoAgent(), "127.0.0.1", {port}, log_level="warning", ws_deflate={deflate!r}
        )
        """
    async with serving(script, port):
        # the client offers it, as browsers and the `ws` package do by default
        async with connect(f"ws://127.0.0.1:{port}/acp", compression="deflate") as ws:
            assert ws.response is not None
            accepted = ws.response.headers.get("Sec-WebSocket-Extensions") or ""
            info = {"name": "test", "version": "1"}
            params = {"protocolVersion": 2, "info": info, "capabilities": {}}
            answer = await request(ws, 1, "initialize", params)
            assert answer["info"]["name"] == "py-echo-agent"  # compressed or not, it arrives
    assert ("permessage-deflate" in accepted) == deflate, accepted


async def _turn(ws: ClientConnection, session: str, words: list[str]) -> list[str]:
    """Prompt the echo agent with ``words``; the chunks of its answer, once its turn ended."""
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": " ".join(words)}]}
    message = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
    await ws.send(json.dumps(message))
    chunks = []
    while True:
        update = json.loads(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT))
        update = update.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            chunks.append(update["content"]["text"])
        if update.get("state") == "idle":
            return chunks


SERVE_REMOTE = (
    "remote.serve_remote(EchoAgent(), '127.0.0.1', {port}, log_level='warning', {options})"
)
# uvicorn's own protocol, one write per frame: the app's pump sends one ``websocket.send`` each
UVICORNS_OWN = (
    "import uvicorn; uvicorn.run(remote.acp_asgi_app(EchoAgent()), host='127.0.0.1', port={port},"
    " log_level='warning', ws='websockets-sansio')"
)


@pytest.mark.parametrize(
    "serve",
    [
        SERVE_REMOTE.format(port="{port}", options=""),
        SERVE_REMOTE.format(port="{port}", options="ws_deflate=True"),
        SERVE_REMOTE.format(port="{port}", options="loop='asyncio'"),
        UVICORNS_OWN,
    ],
    ids=["batched", "deflate", "asyncio", "uvicorns-own"],
)
async def test_frames_of_every_length_arrive_whole_and_in_order(serve: str) -> None:
    """Payloads under 126 bytes, under 64 KiB and over it (the three header sizes), one batch
    over the write threshold, through each path: batched frames (plain and compressed), and the
    app's one send per frame under uvicorn's own protocol."""
    port = _free_port()
    script = f"""
        from tests.remote.support import EchoAgent, remote
        {serve.format(port=port)}
        """
    words = ["a", "b" * 200, "c" * 70_000, *(f"w{i}" for i in range(100)), "d" * 65_535]
    async with serving(script, port):
        ws, session = await open_session(port)
        assert await _turn(ws, session, words) == words
        assert await _turn(ws, session, words[:3]) == words[:3]
        await ws.close()


async def test_plain_sends_of_text_and_bytes_are_batched_in_order() -> None:
    """An ASGI app's own ``websocket.send``s (text and bytes, the three header sizes) and a
    ``SEND_MANY`` batch, sent in one loop turn, arrive whole and in order, then the close."""
    from tests.remote.support import uvicorn_server

    texts = ["a", "b" * 200, "c" * 70_000]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        for text in texts:
            await send({"type": "websocket.send", "text": text})
            await send({"type": "websocket.send", "bytes": text.encode()})
        await send({"type": SEND_MANY, "texts": [b"x" * 300, b"y"]})
        await send({"type": "websocket.close", "code": 4000})

    async with uvicorn_server(app) as base:
        async with connect(f"ws://{base}/", compression=None) as ws:
            got = [await asyncio.wait_for(ws.recv(), STEP_TIMEOUT) for _ in range(8)]
            await asyncio.wait_for(ws.wait_closed(), STEP_TIMEOUT)
    pairs = [item for text in texts for item in (text, text.encode())]
    assert got == [*pairs, "x" * 300, "y"]
    assert ws.close_code == 4000


FALLBACK = """
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol as W
    from acp_runtime.remote import uvicorn_ws
    from tests.remote.support import EchoAgent, remote
    {patch}
    app = remote.acp_asgi_app(EchoAgent())
    async def recording(scope, receive, send):
        if scope["type"] == "websocket":
            print(uvicorn_ws.SEND_MANY in scope["extensions"], flush=True)
        await app(scope, receive, send)
    remote.serve_asgi(recording, "127.0.0.1", {port}, log_level="warning")
    """
WRAPPED_INIT = """
    original = W.__init__
    def init(self, *args, **kwargs):  # sets nothing itself: uvicorn's attributes look gone
        original(self, *args, **kwargs)
    W.__init__ = init
    """


@pytest.mark.parametrize(
    ("patch", "missing"),
    [
        ("del W.resume_writing", "lacks resume_writing, which"),
        (WRAPPED_INIT, "lacks conn, writable, queue"),
        ("", None),
    ],
    ids=["a-method", "attributes", "as-installed"],
)
async def test_a_uvicorn_lacking_what_the_protocol_uses_serves_with_its_own(
    patch: str, missing: str | None
) -> None:
    """A future uvicorn whose class no longer has what the subclass uses (patched here): the
    server warns once, naming uvicorn's version, and serves with uvicorn's own protocol (no
    ``SEND_MANY``); as installed, no warning and the batching protocol."""
    import uvicorn

    port = _free_port()
    patch = textwrap.indent(textwrap.dedent(patch), "    ").strip()  # FALLBACK indents line 1
    script = FALLBACK.format(port=port, patch=patch)
    async with serving(script, port, stderr=asyncio.subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        announced = []
        for _ in range(2):
            ws, session = await open_session(port)
            assert await _turn(ws, session, ["one", "two"]) == ["one", "two"]
            await ws.close()
            announced.append((await process.stdout.readline()).decode().strip())
        process.terminate()
        errors = (await asyncio.wait_for(process.stderr.read(), STEP_TIMEOUT)).decode()
    assert announced == [str(missing is None)] * 2
    warnings = [line for line in errors.splitlines() if "WebSocketsSansIOProtocol lacks" in line]
    if missing is None:
        assert warnings == [], errors
    else:
        assert len(warnings) == 1, errors
        assert missing in warnings[0] and f"uvicorn {uvicorn.__version__}'s" in warnings[0]


def _segments_in(sock: socket.socket) -> int:
    # struct tcp_info (linux/tcp.h): tcpi_segs_in, a u32 at byte 140 (Linux 4.2 and later)
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    segments: int = struct.unpack_from("I", info, 140)[0]
    return segments


@pytest.mark.skipif(sys.platform != "linux", reason="TCP_INFO's layout is Linux's")
@pytest.mark.parametrize("loop", LOOPS)
async def test_the_frames_of_a_turn_leave_in_a_few_writes(loop: str) -> None:
    """300 updates sent in one loop turn arrive in a few TCP segments (one write per turn, not
    per frame: with uvicorn's own protocol, 30 to 300 over loopback), every one of them, in
    order."""
    port = _free_port()
    script = f"""
        from tests.remote.support import EchoAgent, remote
        remote.serve_remote(EchoAgent(), "127.0.0.1", {port}, log_level="warning", loop={loop!r})
        """
    words = [f"w{i}" for i in range(300)]
    async with serving(script, port):
        ws, session = await open_session(port)
        sock = ws.transport.get_extra_info("socket")
        before = _segments_in(sock)
        chunks = await _turn(ws, session, words)
        segments = _segments_in(sock) - before
        await ws.close()
    assert chunks == words
    assert segments <= 16, segments


async def test_a_websocket_holds_less_memory_than_under_uvicorns_protocol() -> None:
    """Python memory per initialized WebSocket with a session (tracemalloc in the server, 40
    connections, asyncio's loop): 32.6 KiB under uvicorn's own protocol, 26.2 KiB with ours."""
    port = _free_port()
    script = f"""
        import tracemalloc
        from tests.remote.support import EchoAgent, remote
        def agent():
            print(tracemalloc.get_traced_memory()[0], flush=True)
            return EchoAgent()
        tracemalloc.start()
        remote.serve_remote(agent, "127.0.0.1", {port}, log_level="warning", loop="asyncio")
        """
    count = 40
    async with serving(script, port) as process:
        assert process.stdout is not None
        held = []
        for _ in range(count + 3):
            held.append(await open_session(port))
        readings = [int(await process.stdout.readline()) for _ in range(count + 3)]
        for ws, _ in held:
            await ws.close()
    per_connection = (readings[count + 2] - readings[2]) / count / 1024  # the first two warm up
    assert per_connection < 30, f"{per_connection:.1f} KiB per connection"


async def test_sockets_are_read_into_buffers_the_heap_serves() -> None:
    """asyncio reads a socket 256 KiB at a time, a buffer the allocator maps, shrinks and unmaps
    on every read (three system calls per message at 1,024 connections: 1.21-1.39x the TS
    server's updates/s before, 1.62-1.80x after). The server reads at most 64 KiB: the peak of
    Python memory while a WebSocket sets up a session stays far below 256 KiB."""
    port = _free_port()
    script = f"""
        import tracemalloc
        from tests.remote.support import EchoAgent, remote
        def agent():
            current, peak = tracemalloc.get_traced_memory()
            print(peak - current, flush=True)
            tracemalloc.reset_peak()
            return EchoAgent()
        tracemalloc.start()
        remote.serve_remote(agent, "127.0.0.1", {port}, log_level="warning", loop="asyncio")
        """
    async with serving(script, port) as process:
        assert process.stdout is not None
        held = [await open_session(port) for _ in range(6)]
        peaks = [int(await process.stdout.readline()) for _ in range(6)]
        for ws, _ in held:
            await ws.close()
    # The first two warm up; each later reading covers a whole connection's setup.
    assert max(peaks[2:]) < 160 * 1024, peaks


async def test_inbox_hands_items_in_order_to_any_number_of_readers() -> None:
    inbox = Inbox()
    inbox.put_nowait(1)
    assert (inbox.qsize(), inbox.empty()) == (1, False)
    assert await inbox.get() == 1
    assert inbox.empty()
    readers = [asyncio.ensure_future(inbox.get()) for _ in range(3)]
    await asyncio.sleep(0)
    cancelled = readers.pop(0)
    cancelled.cancel()  # a reader that gives up leaves no waiter behind
    for item in ("a", "b"):
        inbox.put_nowait(item)
    assert sorted(await asyncio.gather(*readers)) == ["a", "b"]
    assert cancelled.cancelled()
    inbox.put_nowait("c")
    assert await inbox.get() == "c"


async def test_flag_wakes_every_waiter_when_set() -> None:
    flag = Flag()
    assert flag.is_set() and await flag.wait()
    flag.clear()
    waiters = [asyncio.ensure_future(flag.wait()) for _ in range(2)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    flag.set()
    assert await asyncio.gather(*waiters) == [True, True]
    flag.clear()
    waiter = asyncio.ensure_future(flag.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiter
    flag.set()  # no cancelled waiter left to wake
    assert await flag.wait()


async def test_uvicorn_takes_the_protocol_by_its_import_string() -> None:
    """`uvicorn module:app --ws acp_runtime.remote.uvicorn_ws:WebSocketProtocol`: the app sees
    the protocol's batch extension (uvicorn's own protocol announces none)."""
    from tests.remote.support import uvicorn_server

    seen: list[dict[str, Any]] = []
    app = remote.acp_asgi_app(EchoAgent())

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            seen.append(dict(scope["extensions"]))
        await app(scope, receive, send)

    for ws_option, announced in (
        ("acp_runtime.remote.uvicorn_ws:WebSocketProtocol", True),
        ("websockets-sansio", False),
    ):
        async with uvicorn_server(recording, ws=ws_option) as base:
            port = int(base.rsplit(":", 1)[1])
            ws, session = await open_session(port)
            assert await _turn(ws, session, ["one", "two"]) == ["one", "two"]
            await ws.close()
        assert (SEND_MANY in seen.pop()) == announced
