"""Cost of a proxy chain: round trips and updates per second through `acp-conductor` with 0, 1 and 3
pass-through proxies, against the direct connection to the same agent, in the same run.

Every part is a process over real pipes: the client is this process; the agent and the proxies
are this script run as `--agent` / `--proxy` (the agent is raw `acp_runtime.jsonrpc`: it answers
`_ping` at once and answers `_flood` after sending that many `session/update` notifications; the
proxies are `Proxy()`, which forward everything raw).

Measured, for each chain: sequential round trips of `_ping` (1 in flight), and `session/update`
notifications per second (the client times the `_flood` request, which returns after its
updates). Reported: medians over rounds (ABBA order), the ratio of each chain's time per
operation to the direct one, and the cost of one proxy hop as a fraction of a direct round trip:
(time(3 proxies) - time(0 proxies)) / 3 / time(direct). The goal of issue 36 is <= 0.25.

    python bench/chain.py [--rounds 3] [--requests 500] [--updates 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from acp_runtime.jsonrpc import Connection, connect_stdio, spawn
from acp_runtime.proxies import Proxy, serve_proxy

CONDUCTOR = str(Path(sys.executable).with_name("acp-conductor"))
SELF = [sys.executable, str(Path(__file__).resolve())]


class _Agent:
    connection: Connection

    async def unlisted_request(self, method: str, params: Any) -> Any:
        if method == "_flood":
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}
            for _ in range(params["n"]):
                await self.connection.notify("session/update", {"sessionId": "s", "update": update})
        return {"ok": True}

    async def unlisted_notification(self, method: str, params: Any) -> None:
        return None


class _Client:
    def __init__(self) -> None:
        self.updates = 0

    async def unlisted_request(self, method: str, params: Any) -> Any:
        return None

    async def unlisted_notification(self, method: str, params: Any) -> None:
        self.updates += 1


async def _serve_agent() -> None:
    agent = _Agent()
    agent.connection = await connect_stdio(agent, {})
    await agent.connection.run()


def _command(proxies: int | None) -> list[str]:
    agent = [*SELF, "--agent"]
    if proxies is None:
        return agent
    command = [CONDUCTOR]
    for _ in range(proxies):
        command += ["--proxy", shlex.join([*SELF, "--proxy"])]
    return [*command, "--agent", shlex.join(agent)]


async def _measure(proxies: int | None, requests: int, updates: int) -> tuple[float, float]:
    """Seconds per round trip and per update through one chain (None: direct)."""
    client = _Client()
    connection, process = await spawn(_command(proxies), client, {})
    async with connection:
        for _ in range(20):  # warm up every hop (imports, first-use caches)
            await connection.request("_ping", {}, None)
        started = time.perf_counter()
        for _ in range(requests):
            await connection.request("_ping", {"_meta": {"trace": 1}}, None)
        round_trip = (time.perf_counter() - started) / requests
        started = time.perf_counter()
        await connection.request("_flood", {"n": updates}, None)
        per_update = (time.perf_counter() - started) / updates
        assert client.updates == updates
    await process.wait()
    return round_trip, per_update


async def _bench(rounds: int, requests: int, updates: int) -> None:
    chains: list[int | None] = [None, 0, 1, 3]
    times: dict[int | None, list[tuple[float, float]]] = {c: [] for c in chains}
    for index in range(rounds):
        order = chains if index % 2 == 0 else chains[::-1]
        for chain in order:
            times[chain].append(await _measure(chain, requests, updates))
    direct_rt = statistics.median(t[0] for t in times[None])
    direct_up = statistics.median(t[1] for t in times[None])
    print(f"{'chain':<12}{'round trips/s':>15}{'x direct':>10}{'updates/s':>12}{'x direct':>10}")
    for chain in chains:
        rt = statistics.median(t[0] for t in times[chain])
        up = statistics.median(t[1] for t in times[chain])
        name = "direct" if chain is None else f"{chain} proxies"
        print(
            f"{name:<12}{1 / rt:>15.0f}{rt / direct_rt:>10.2f}{1 / up:>12.0f}{up / direct_up:>10.2f}"
        )
    rt0 = statistics.median(t[0] for t in times[0])
    rt3 = statistics.median(t[0] for t in times[3])
    up0 = statistics.median(t[1] for t in times[0])
    up3 = statistics.median(t[1] for t in times[3])
    print(
        f"one proxy hop: {(rt3 - rt0) / 3 / direct_rt:.2f}x a direct round trip "
        f"({(up3 - up0) / 3 / direct_up:.2f}x a direct update); the conductor alone: "
        f"{(rt0 - direct_rt) / direct_rt:.2f}x (goal per hop: <= 0.25x)"
    )


def main() -> None:
    """Run as the benchmark, or as one of its parts (`--agent`, `--proxy`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--proxy", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--updates", type=int, default=5000)
    args = parser.parse_args()
    if args.agent:
        asyncio.run(_serve_agent())
    elif args.proxy:
        asyncio.run(serve_proxy(Proxy()))
    else:
        asyncio.run(_bench(args.rounds, args.requests, args.updates))


if __name__ == "__main__":
    main()
