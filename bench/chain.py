"""Cost of a proxy chain: round trips and updates per second through `acp-conductor` with 0, 1 and 3
pass-through proxies, against the direct connection to the same agent, in the same run.

Every part is a process over real pipes: the client is this process; the agent and the proxies
are this script run as `--agent` / `--proxy` (the agent is raw `acp_runtime.jsonrpc`: it answers
`_ping` at once and answers `_flood` after sending that many `session/update` notifications; the
proxies are `Proxy()`, which forward everything raw). The same proxies also run inside the
conductor (`--proxy-object acp_runtime.proxies:Proxy`: the same JSON lines over a pipe pair, no
process switch).

Measured, for each chain: sequential round trips of `_ping` (1 in flight), and `session/update`
notifications per second (the client times the `_flood` request, which returns after its
updates). Reported: medians over rounds (ABBA order), the ratio of each chain's time per
operation to the direct one, and the cost of one proxy hop as a fraction of a direct round trip:
(time(3 proxies) - time(0 proxies)) / 3 / time(direct), for process and in-conductor proxies. The
goal of issue 36 is <= 0.25.

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


Chain = tuple[int, bool] | None
"""(number of proxies, run inside the conductor), or None: the direct connection."""


def _command(chain: Chain) -> list[str]:
    agent = [*SELF, "--agent"]
    if chain is None:
        return agent
    proxies, inside = chain
    command = [CONDUCTOR]
    for _ in range(proxies):
        if inside:
            command += ["--proxy-object", "acp_runtime.proxies:Proxy"]
        else:
            command += ["--proxy", shlex.join([*SELF, "--proxy"])]
    return [*command, "--agent", shlex.join(agent)]


def _name(chain: Chain) -> str:
    if chain is None:
        return "direct"
    proxies, inside = chain
    return f"{proxies} proxies" + (" (in conductor)" if inside and proxies else "")


async def _measure(proxies: Chain, requests: int, updates: int) -> tuple[float, float]:
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
    chains: list[Chain] = [None, (0, False), (1, False), (3, False), (1, True), (3, True)]
    times: dict[Chain, list[tuple[float, float]]] = {c: [] for c in chains}
    for index in range(rounds):
        order = chains if index % 2 == 0 else chains[::-1]
        for chain in order:
            times[chain].append(await _measure(chain, requests, updates))

    def median(chain: Chain, which: int) -> float:
        return statistics.median(t[which] for t in times[chain])

    direct_rt, direct_up = median(None, 0), median(None, 1)
    print(f"{'chain':<26}{'round trips/s':>15}{'x direct':>10}{'updates/s':>12}{'x direct':>10}")
    for chain in chains:
        rt, up = median(chain, 0), median(chain, 1)
        print(
            f"{_name(chain):<26}{1 / rt:>15.0f}{rt / direct_rt:>10.2f}"
            f"{1 / up:>12.0f}{up / direct_up:>10.2f}"
        )
    conductor = median((0, False), 0)
    print(f"the conductor alone: {(conductor - direct_rt) / direct_rt:.2f}x a direct round trip")
    for inside in (False, True):
        rt = (median((3, inside), 0) - conductor) / 3 / direct_rt
        up = (median((3, inside), 1) - median((0, False), 1)) / 3 / direct_up
        where = "in the conductor" if inside else "as processes"
        print(
            f"one proxy hop, {where}: {rt:.2f}x a direct round trip, {up:.2f}x a direct "
            "update (goal: <= 0.25x)"
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
