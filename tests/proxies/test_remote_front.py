"""`acp-conductor --listen`: remote clients (WebSocket and Streamable HTTP) in front of a chain, one
chain per connection, over real sockets and pipes."""

from __future__ import annotations

import asyncio
import socket
import subprocess

import pytest
from chain_support import PERMISSION, RawClient, chain_env, conductor

pytest.importorskip("websockets")

from acp_runtime.jsonrpc import Connection  # noqa: E402
from acp_runtime.remote.client import open_url  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    async with asyncio.timeout(20):
        while True:
            assert process.poll() is None, "acp-conductor --listen exited"
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            return


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_remote_clients_get_a_chain_each(scheme: str) -> None:
    port = _free_port()
    command = [*conductor(["passthrough_proxy.py"]), "--listen", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, env=chain_env())
    try:
        await _until_listening(port, server)
        for _ in range(2):  # two connections in a row, each with a chain of its own
            client = RawClient()
            reader, writer = await open_url(f"{scheme}://127.0.0.1:{port}/acp")
            async with Connection(client, {}, reader, writer) as connection:
                init = {"protocolVersion": 2, "_meta": {"via": scheme}}
                assert await connection.request("initialize", init, None) == {
                    "method": "initialize",
                    "params": init,
                }
                session = await connection.request(
                    "session/new", {"cwd": "/", "mcpServers": []}, None
                )
                prompt = {"sessionId": session["sessionId"], "prompt": [], "_updates": 5}
                answer = await connection.request("session/prompt", prompt, None)
                assert answer["permission"] == PERMISSION
                updates = [p["update"]["n"] for m, p in client.notes if m == "session/update"]
                assert updates == list(range(5))
    finally:
        server.terminate()
        server.wait(timeout=20)
