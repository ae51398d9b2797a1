"""The public entry points around the app: the package imports without the transport's
libraries, `serve_remote` serves on a real port (uvicorn), and Streamable HTTP over HTTP/2
(hypercorn, the RFD's requirement) carries a whole prompt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import textwrap
from typing import Any

from tests.remote.support import (
    GENERATED,
    ROOT,
    STEP_TIMEOUT,
    EchoAgent,
    RecordingClient,
    init_request,
    new_session,
    prompt,
    remote,
)

BLOCKED = ("uvicorn", "hypercorn", "websockets", "httpx", "httpx_sse", "h2", "starlette")


def test_packages_and_the_remote_api_import_without_the_remote_libraries() -> None:
    script = textwrap.dedent(f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {BLOCKED!r}:
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import acp_v2_draft, acp_v1, acp_v2
        from acp_runtime import remote
        app = remote.acp_asgi_app(acp_v2_draft.Agent)
        print(type(app).__name__, sorted(m for m in sys.modules if m.split(".")[0] in {BLOCKED!r}))
        """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "RemoteApp []"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _listening(port: int) -> None:
    for _ in range(200):
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        await asyncio.sleep(0.05)


async def _lifecycle(url: str, **options: Any) -> list[tuple[Any, ...]]:
    client = RecordingClient()
    peer, connection = await remote.connect_url(url, client, **options)
    async with connection:
        await asyncio.wait_for(peer.initialize(init_request()), STEP_TIMEOUT)
        session = (await asyncio.wait_for(peer.session_new(new_session()), STEP_TIMEOUT)).session_id
        await asyncio.wait_for(
            peer.session_prompt(prompt(session, "ask permission then echo")), STEP_TIMEOUT
        )
        await client.wait_for("idle", lambda: client.idle(session))
    return client.events[session]


async def test_serve_remote_serves_websocket_and_http() -> None:
    port = _free_port()
    script = textwrap.dedent(f"""
        from tests.remote.support import EchoAgent, remote
        remote.serve_remote(EchoAgent(), "127.0.0.1", {port}, log_level="warning")
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(GENERATED)])}
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", script, cwd=ROOT, env=env)
    try:
        await _listening(port)
        for scheme in ("ws", "http"):
            events = await _lifecycle(f"{scheme}://127.0.0.1:{port}/acp")
            assert ("chunk", "m_perm", "selected:allow") in events
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await asyncio.wait_for(process.wait(), 10)
    assert process.returncode in (0, -15), process.returncode


async def test_streamable_http_over_http2_with_hypercorn() -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    versions: set[str] = set()
    app = remote.acp_asgi_app(EchoAgent())

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            versions.add(scope["http_version"])
        await app(scope, receive, send)

    port = _free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    stop = asyncio.Event()
    server = asyncio.ensure_future(serve(recording, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    try:
        await _listening(port)
        events = await _lifecycle(f"http://127.0.0.1:{port}/acp", http2=True)
        assert ("chunk", "m_perm", "selected:allow") in events
        assert versions == {"2"}, versions  # every request, streams included, over HTTP/2
    finally:
        stop.set()
        await asyncio.wait_for(server, 10)


async def test_agent_factory_may_return_a_stream_runner() -> None:
    """The hook for a version router: the factory's runner drives the connection itself."""
    from tests.remote.support import acp, uvicorn_server

    runs: list[str] = []

    def factory() -> Any:
        async def runner(reader: Any, writer: Any) -> None:
            agent = EchoAgent()
            connection = acp.Connection(agent, acp.AGENT_METHODS, reader, writer)
            agent.peer = acp.ClientPeer(connection)
            runs.append("started")
            await connection.run()

        return runner

    async with uvicorn_server(remote.acp_asgi_app(factory)) as base:
        for scheme in ("ws", "http"):
            events = await _lifecycle(f"{scheme}://{base}/acp")
            assert ("chunk", "m_echo", "echo") in events
    assert runs == ["started", "started"]
