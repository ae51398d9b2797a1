"""Remote transport under load: N concurrent WebSocket connections, each streaming prompts.

Servers (each a child process on 127.0.0.1, the same echo agent lifecycle):

- ``ours``: the generated ``acp_v2_draft`` ASGI app (``remote.acp_asgi_app``) under uvicorn,
  serving tests/remote/support.py's ``EchoAgent``;
- ``ts``: the reference TypeScript SDK's ``AcpServer`` (tests/remote/ts_server.mjs, node + ws).

The load is the same for both and comes from this process: our ``connect_ws`` client, N
connections opened at once, each initialized with one session, then each sends ``--prompts``
prompts one after another, every prompt echoing ``--words`` words as ``agent_message_chunk``
updates. Measured per server and N:

- updates/s: every ``session/update`` received by all clients over the wall time of the load;
- p50/p99 round trip: from sending ``session/prompt`` to receiving the turn's final
  ``state_update`` (idle), over all prompts;
- RSS per connection: (server RSS with N initialized connections - RSS before) / N.

Ratios are ours / ts, measured in the same run (on a noisy shared machine only those mean much).
Needs node and tests/remote/node_modules (``pytest tests/remote`` installs it), psutil.

    python bench/remote.py [--connections 1,16,256] [--prompts 3] [--words 40] [--servers ours,ts]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REMOTE_DIR = ROOT / "tests" / "remote"
for path in (ROOT, ROOT / "generated"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import acp_v2_draft as acp
from acp_runtime import remote

STARTUP_TIMEOUT = 20.0


class LoadClient(acp.Client):
    """Counts updates; resolves the waiting prompt's future on the turn's final idle update."""

    def __init__(self) -> None:
        self.updates = 0
        self.turn_done: asyncio.Future[None] | None = None

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.updates += 1
        update = params.update
        idle = getattr(update, "session_update", None) == "state_update" and update.state == "idle"
        if idle and self.turn_done is not None and not self.turn_done.done():
            self.turn_done.set_result(None)


@dataclass
class Result:
    """One server at one connection count."""

    server: str
    connections: int
    updates_per_s: float
    p50_ms: float
    p99_ms: float
    rss_per_conn_kib: float


def serve_ours() -> None:
    """Child process: our app under uvicorn on a free 127.0.0.1 port (printed as JSON)."""
    import os

    import uvicorn

    from tests.remote.support import EchoAgent

    # proto IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP (a
    # plain socket.socket() has proto 0, and Nagle's algorithm then adds ~40 ms per turn).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)  # connections wait in the backlog until uvicorn accepts them
    app = remote.acp_asgi_app(EchoAgent())
    config = uvicorn.Config(app, log_level="warning", ws="websockets-sansio", lifespan="on")
    server = uvicorn.Server(config)
    print(json.dumps({"port": sock.getsockname()[1], "pid": os.getpid()}), flush=True)
    asyncio.run(server.serve(sockets=[sock]))


async def start(server: str) -> tuple[asyncio.subprocess.Process, int]:
    """Start a server child; its process and port."""
    if server == "ours":
        command = [sys.executable, str(Path(__file__).resolve()), "--serve-ours"]
    else:
        command = ["node", str(REMOTE_DIR / "ts_server.mjs")]
    process = await asyncio.create_subprocess_exec(
        *command, cwd=REMOTE_DIR, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), STARTUP_TIMEOUT)
    return process, int(json.loads(line)["port"])


async def stop(process: asyncio.subprocess.Process) -> None:
    """End a server child (stdin EOF for node, terminate for uvicorn)."""
    if process.stdin is not None:
        process.stdin.close()
    if process.returncode is None:
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        process.kill()
        await process.wait()


async def run_load(server: str, connections: int, prompts: int, words: int) -> Result:
    """Start `server`, put `connections` connections through the load, measure."""
    import psutil

    process, port = await start(server)
    try:
        rss = psutil.Process(process.pid)
        url = f"ws://127.0.0.1:{port}/acp"
        opened: list[tuple[LoadClient, Any, Any, str]] = []

        async def open_one() -> None:
            client = LoadClient()
            peer, connection = await remote.connect_ws(url, client)
            await connection.__aenter__()
            await peer.initialize(
                acp.InitializeRequest.from_dict(
                    {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}}
                )
            )
            session = await peer.session_new(
                acp.NewSessionRequest.from_dict({"cwd": str(ROOT), "mcpServers": []})
            )
            opened.append((client, peer, connection, session.session_id))

        text = " ".join(f"w{i}" for i in range(words))
        latencies: list[float] = []
        loop = asyncio.get_running_loop()

        async def drive(client: LoadClient, peer: Any, session_id: str, warm: bool = False) -> None:
            request = acp.PromptRequest.from_dict(
                {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
            )
            for _ in range(1 if warm else prompts):
                client.turn_done = loop.create_future()
                began = time.perf_counter()
                await peer.session_prompt(request)
                await asyncio.wait_for(client.turn_done, 120)
                if not warm:
                    latencies.append(time.perf_counter() - began)

        # Warm-up, not measured: one connection through one prompt (schema caches, JIT).
        await open_one()
        warm_client, warm_peer, warm_connection, warm_session = opened.pop()
        await drive(warm_client, warm_peer, warm_session, warm=True)
        await warm_connection.close()
        await asyncio.sleep(0.3)
        before = rss.memory_info().rss
        await asyncio.gather(*(open_one() for _ in range(connections)))
        await asyncio.sleep(0.3)
        after = rss.memory_info().rss

        counted = sum(c.updates for c, *_ in opened)
        began = time.perf_counter()
        await asyncio.gather(*(drive(c, p, s) for c, p, _, s in opened))
        wall = time.perf_counter() - began
        updates = sum(c.updates for c, *_ in opened) - counted
        for _, _, connection, _ in opened:
            await connection.close()
    finally:
        await stop(process)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return Result(
        server,
        connections,
        updates / wall,
        statistics.median(latencies) * 1000,
        p99 * 1000,
        (after - before) / connections / 1024,
    )


async def main(args: argparse.Namespace) -> None:
    """Run every server at every connection count; print the table and the ratios."""
    servers = args.servers.split(",")
    counts = [int(n) for n in args.connections.split(",")]
    results: dict[tuple[str, int], Result] = {}
    for n in counts:
        for server in servers:
            result = await run_load(server, n, args.prompts, args.words)
            results[server, n] = result
            print(
                f"{server:5} N={n:4}  {result.updates_per_s:9.0f} updates/s  "
                f"p50 {result.p50_ms:7.1f} ms  p99 {result.p99_ms:7.1f} ms  "
                f"RSS/conn {result.rss_per_conn_kib:8.1f} KiB",
                flush=True,
            )
    if {"ours", "ts"} <= set(servers):
        print("\nratios ours/ts (updates/s: >1 is better; latency and RSS/conn: <1 is better)")
        for n in counts:
            ours, ts = results["ours", n], results["ts", n]
            rss = (
                f"{ours.rss_per_conn_kib / ts.rss_per_conn_kib:.2f}"
                if ts.rss_per_conn_kib > 0
                else "n/a"
            )
            print(
                f"N={n:4}  updates/s {ours.updates_per_s / ts.updates_per_s:.2f}  "
                f"p50 {ours.p50_ms / ts.p50_ms:.2f}  p99 {ours.p99_ms / ts.p99_ms:.2f}  "
                f"RSS/conn {rss}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="1,16,256")
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--servers", default="ours,ts")
    parser.add_argument("--serve-ours", action="store_true", help=argparse.SUPPRESS)
    arguments, _ = parser.parse_known_args()  # `nox -s bench -- ...` passes other scripts' options
    if arguments.serve_ours:
        serve_ours()
    else:
        asyncio.run(main(arguments))
