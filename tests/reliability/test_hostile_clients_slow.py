"""The issue's own figures, too slow for the suite: `nox -s hostile_clients` (issue 32).

Concurrent results and requests far over ``Limits.max_output_bytes`` (64 MiB) reach a peer that
reads them, over a real TCP socket with the default limits: 7 x 10 MB and 2 x 40 MB results,
8 x 10 MB requests sent by a client. Our HTTP client (default ``ClientLimits``, in a subprocess
whose peak RSS is measured) against agents sending bodies, error bodies and an SSE line with no
end, and naming 3,000 sessions. Skipped unless run with ``-m hostile_clients`` (``-s`` prints
the figures).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))  # rpc_testkit
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.remote
from acp_runtime import remote
from rpc_testkit import (
    EchoClient,
    EchoParams,
    EchoResult,
    build_server,
    client_table,
    load_runtime,
)

from tests.remote.hostile_agent_http import Scenario, hostile_agent

pytestmark = pytest.mark.hostile_clients
HERE = Path(__file__).resolve().parent
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


# ----------------------------------------------------------------------------- the HTTP client

CLIENT_MEMORY_BOUND = 96 * 1024  # kB of peak RSS over the client's baseline (16 MiB messages)


async def _client_run(scenario: Scenario, steps: str) -> dict[str, Any]:
    async with hostile_agent(scenario) as url:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "hostile_http_client.py"),
            url,
            steps,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(child.communicate(), TIMEOUT)
    assert child.returncode == 0
    result: dict[str, Any] = json.loads(out)
    result["sent_mb"] = scenario.sent_bytes >> 20
    return result


async def test_hostile_agents_cannot_grow_the_http_client() -> None:
    baseline = await _client_run(Scenario(), "once")
    assert baseline["outcomes"] == ["ok"]
    cases = {
        "endless initialize body": (Scenario(initialize="endless"), "once", "max_message_bytes"),
        "endless error body": (Scenario(initialize="error"), "once", "HTTP 500"),
        "endless SSE line": (Scenario(stream="endless-line"), "more", "connection closed"),
    }
    for name, (scenario, steps, expected) in cases.items():
        result = await _client_run(scenario, steps)
        grown = result["peak_kb"] - baseline["peak_kb"]
        print(f"{name}: {result['outcomes']}, +{grown >> 10} MB peak, {result['sent_mb']} MB sent")
        assert expected in result["outcomes"][-1], (name, result)
        assert grown < CLIENT_MEMORY_BOUND, (name, result, baseline)


async def test_3000_sessions_named_by_the_agent_open_64_streams() -> None:
    scenario = Scenario(sessions=3000)
    result = await _client_run(scenario, "more")
    print(f"3000 sessions named: {len(scenario.session_gets)} streams opened")
    assert result["outcomes"] == ["ok", "ok"]
    assert len(scenario.session_gets) == remote.ClientLimits().max_session_streams
    assert scenario.most_session_streams <= remote.ClientLimits().max_session_streams
