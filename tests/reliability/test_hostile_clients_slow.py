"""The issue's own figures, too slow for the suite: `nox -s hostile_clients` (issue 32).

Concurrent results and requests far over ``Limits.max_output_bytes`` (64 MiB) reach a peer that
reads them, over a real TCP socket with the default limits: 7 x 10 MB and 2 x 40 MB results,
8 x 10 MB requests sent by a client. Skipped unless run with ``-m hostile_clients``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from rpc_testkit import (
    EchoClient,
    EchoParams,
    EchoResult,
    build_server,
    client_table,
    load_runtime,
)

pytestmark = pytest.mark.hostile_clients
rpc = load_runtime()
MB = 1 << 20
TIMEOUT = 120.0


@pytest.fixture(autouse=True)
def _only_when_asked(request: pytest.FixtureRequest) -> None:
    if "hostile_clients" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("slow: run with -m hostile_clients (nox -s hostile_clients)")


async def _socket_pair() -> tuple[Any, Any, Any, Any]:
    accepted: asyncio.Future[tuple[Any, Any]] = asyncio.get_running_loop().create_future()
    listener = await asyncio.start_server(lambda r, w: accepted.set_result((r, w)), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    client_reader, client_writer = await asyncio.open_connection("127.0.0.1", port, limit=MB)
    server_reader, server_writer = await accepted
    listener.close()
    return client_reader, client_writer, server_reader, server_writer


@pytest.mark.parametrize("count,size", [(7, 10 * MB), (2, 40 * MB), (8, 10 * MB)])
async def test_results_over_64_mib_reach_a_reading_peer(count: int, size: int) -> None:
    client_reader, client_writer, server_reader, server_writer = await _socket_pair()
    echo, table = build_server(rpc)
    server = rpc.Connection(echo, table, server_reader, server_writer)
    client = rpc.Connection(EchoClient(), client_table(rpc), client_reader, client_writer)
    async with client, server:
        # Each request carries its payload too: the client sends count x size at once.
        texts = [chr(ord("a") + i) * size for i in range(count)]
        calls = [client.request("echo", EchoParams(text=t), EchoResult) for t in texts]
        results = await asyncio.wait_for(asyncio.gather(*calls), TIMEOUT)
        assert [r.text == t for r, t in zip(results, texts, strict=True)] == [True] * count
