"""Cost of a proxy chain: round trips and updates per second through `acp-conductor` with 0, 1 and 3
pass-through proxies, against the direct connection to the same agent, in the same run.

Every part is a process over real pipes: the client is this process; the agent and the proxies
are this script run as `--agent` / `--proxy` (the agent is raw `acp_runtime.jsonrpc`: it answers
`_ping` at once and answers `_flood` after sending that many `session/update` notifications; the
proxies are `Proxy()`, which forward everything raw). Two more kinds of proxy give the bounds:

- `in conductor`: the same `Proxy()` run inside the conductor (`--proxy-object`: no process, no
  pipe, no JSON between it and the conductor);
- `bare`: a pass-through proxy process without the runtime (`bare.py`, run as `--bare-proxy`:
  plain asyncio pipes and the standard `json`, one parse and one write per message, no limits, no
  cancellation): the floor of what a proxy process costs in Python, the wake-ups and pipe crossings
  with next to no work. And `pipe ping-pong`: two processes passing one byte back and forth over
  blocking pipes, the kernel's share of a round trip between two processes.

Measured, for each chain: sequential round trips of `_ping` (1 in flight), and `session/update`
notifications per second (the client times the `_flood` request, which returns after its
updates); for both, the wall time per operation and the CPU time every process of the chain spent
per operation (the client's `time.process_time`, the others' `/proc/<pid>/stat`): on a shared
machine the CPU figures move less than the wall figures. Reported: medians over rounds (ABBA
order), each chain's time per operation as a ratio to the direct one, the CPU each part spent,
and two costs as fractions of a direct operation:

- the conductor's own: (t(conductor, no proxy) - t(direct)) / t(direct),
- one proxy hop: (t(3 proxies) - t(1 proxy)) / 2 / t(direct), for each kind of proxy (the goal of
  issue 36 is <= 0.25).

    python bench/chain.py [--rounds 3] [--requests 1000] [--updates 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_runtime.jsonrpc import Connection, connect_stdio, spawn
from acp_runtime.proxies import Proxy, serve_proxy
from bare import ping_pong, serve_bare_proxy, serve_echo

CONDUCTOR = str(Path(sys.executable).with_name("acp-conductor"))
SELF = [sys.executable, str(Path(__file__).resolve())]
_TICK = os.sysconf("SC_CLK_TCK")


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


# ---------------------------------------------------------------------- chains

KINDS = {
    "process": ("proxy process", "proxy processes"),
    "inside": ("proxy inside it", "proxies inside it"),
    "bare": ("bare proxy process", "bare proxy processes"),
}
"""Kinds of proxy: `Proxy()` processes, `Proxy()` inside the conductor, bare proxy processes."""


@dataclass(frozen=True)
class Chain:
    """A chain to measure: `proxies` of one `kind` between conductor and agent; no conductor at
    all when `direct`."""

    proxies: int = 0
    kind: str = "process"
    direct: bool = False

    @property
    def name(self) -> str:
        if self.direct:
            return "direct"
        if not self.proxies:
            return "conductor, no proxy"
        return f"conductor + {self.proxies} {KINDS[self.kind][self.proxies > 1]}"

    def command(self) -> list[str]:
        agent = [*SELF, "--agent"]
        if self.direct:
            return agent
        command = [CONDUCTOR]
        for _ in range(self.proxies):
            if self.kind == "inside":
                command += ["--proxy-object", "acp_runtime.proxies:Proxy"]
            else:
                part = "--bare-proxy" if self.kind == "bare" else "--proxy"
                command += ["--proxy", shlex.join([*SELF, part])]
        return [*command, "--agent", shlex.join(agent)]


DIRECT, CONDUCTOR_ONLY = Chain(direct=True), Chain()
CHAINS = [
    DIRECT,
    CONDUCTOR_ONLY,
    *(Chain(n, kind) for kind in KINDS for n in (1, 3)),
]


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, parents first (the conductor, then its components in order)."""
    found = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
            for child in children:
                found += _tree(int(child))
    except OSError:
        pass
    return found


@dataclass
class Sample:
    """One chain's figures in one round: seconds per operation, wall and CPU (CPU per part:
    the client, then each process of the chain in order)."""

    wall: float
    parts: list[float]

    @property
    def cpu(self) -> float:
        return sum(self.parts)


class _Meter:
    """Wall clock and CPU time of the client and every process of a chain over one measurement."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids

    def __enter__(self) -> _Meter:
        self.started = time.perf_counter()
        self.cpu = [time.process_time(), *map(_cpu, self.pids)]
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.started
        after = [time.process_time(), *map(_cpu, self.pids)]
        self.cpu = [b - a for a, b in zip(self.cpu, after, strict=True)]

    def sample(self, operations: int) -> Sample:
        return Sample(self.wall / operations, [c / operations for c in self.cpu])


async def _measure(chain: Chain, requests: int, updates: int) -> tuple[Sample, Sample]:
    """Round trips and updates through one chain."""
    client = _Client()
    connection, process = await spawn(chain.command(), client, {})
    async with connection:
        for _ in range(20):  # warm up every hop (imports, first-use caches)
            await connection.request("_ping", {}, None)
        with _Meter(_tree(process.pid)) as meter:
            for _ in range(requests):
                await connection.request("_ping", {"_meta": {"trace": 1}}, None)
        round_trip = meter.sample(requests)
        with _Meter(meter.pids) as meter:
            await connection.request("_flood", {"n": updates}, None)
        per_update = meter.sample(updates)
        assert client.updates == updates
    await process.wait()
    return round_trip, per_update


# ---------------------------------------------------------------------- report


Samples = dict[Chain, list[tuple[Sample, Sample]]]
"""Each chain's (round trip, update) samples, one per round."""


async def _bench(rounds: int, requests: int, updates: int) -> None:
    samples: Samples = {chain: [] for chain in CHAINS}
    pongs = []
    for index in range(rounds):
        for chain in CHAINS if index % 2 == 0 else CHAINS[::-1]:
            samples[chain].append(await _measure(chain, requests, updates))
        pongs.append(ping_pong([*SELF, "--echo"], requests))
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {rounds} rounds")
    _report(samples, statistics.median(pongs))


def _report(samples: Samples, pong: float) -> None:
    def wall(chain: Chain, which: int) -> float:
        return statistics.median(s[which].wall for s in samples[chain])

    def cpu(chain: Chain, which: int) -> float:
        return statistics.median(s[which].cpu for s in samples[chain])

    print(f"{'':<36}{'per round trip':^27}{'per update':^30}")
    widths = (7, 6, 8, 6, 10, 6, 8, 6)
    cols = ("rt/s", "x", "CPU us", "x", "updates/s", "x", "CPU us", "x")
    print(f"{'chain':<36}" + "".join(f"{c:>{w}}" for c, w in zip(cols, widths, strict=True)))
    for chain in CHAINS:
        row = ""
        for which, width in ((0, 7), (1, 10)):
            t, c = wall(chain, which), cpu(chain, which)
            row += f"{1 / t:>{width}.0f}{t / wall(DIRECT, which):>6.2f}"
            row += f"{c * 1e6:>8.0f}{c / cpu(DIRECT, which):>6.2f}"
        print(f"{chain.name:<36}{row}")

    print("\nCPU us per round trip, by part (client, conductor, proxies in order, agent):")
    for chain in CHAINS:
        parts = zip(*(s[0].parts for s in samples[chain]), strict=True)
        print(f"  {chain.name:<34}" + "".join(f"{statistics.median(p) * 1e6:6.0f}" for p in parts))

    def cost(high: Chain, low: Chain, hops: int) -> str:
        text = []
        for which in (0, 1):
            t = (wall(high, which) - wall(low, which)) / hops / wall(DIRECT, which)
            c = (cpu(high, which) - cpu(low, which)) / hops / cpu(DIRECT, which)
            text.append(f"{t:.2f}x (CPU {c:.2f}x)")
        return f"{text[0]} a round trip, {text[1]} an update"

    print("\nas a fraction of a direct round trip / update: wall time (CPU time)")
    print(f"  the conductor's own cost: {cost(CONDUCTOR_ONLY, DIRECT, 1)}")
    for kind, (what, _) in KINDS.items():
        hop = cost(Chain(3, kind), Chain(1, kind), 2)
        print(f"  one hop, {what}: {hop} (goal: <= 0.25x)")
    direct = wall(DIRECT, 0)
    print(
        f"  pipe ping-pong: {pong * 1e6:.0f} us a round trip = {pong / direct:.2f}x; a hop "
        f"crosses between two processes 4 times: {2 * pong / direct:.2f}x in wake-ups"
    )


def main() -> None:
    """Run as the benchmark, or as one of its parts (`--agent`, `--proxy`, `--bare-proxy`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for part in ("--agent", "--proxy", "--bare-proxy", "--echo"):
        parser.add_argument(part, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=5000)
    args = parser.parse_args()
    if args.agent:
        asyncio.run(_serve_agent())
    elif args.proxy:
        asyncio.run(serve_proxy(Proxy()))
    elif args.bare_proxy:
        asyncio.run(serve_bare_proxy())
    elif args.echo:
        serve_echo()
    else:
        asyncio.run(_bench(args.rounds, args.requests, args.updates))


if __name__ == "__main__":
    main()
