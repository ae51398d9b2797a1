"""Remote servers under load: N connections streaming prompts over WebSocket or Streamable HTTP.

Servers (each a child process on 127.0.0.1, the same echo agent lifecycle):

- ``ours``: ``remote.serve_remote`` (uvicorn, hardened as in production) serving the generated
  ``acp_v2_draft`` package's tests/remote/support.py ``EchoAgent``;
- ``ts``: the reference TypeScript SDK's experimental ``AcpServer`` (tests/remote/ts_server.mjs,
  node + ws).

The load does not come from this process: ``--workers`` node processes (bench/remote_load.mjs:
by default a raw client, one JSON.parse per message over ``ws`` or node:http; ``--client sdk``:
the TypeScript SDK's ws-client and http-client, which validate every message and cost more CPU
than the servers) each open N/workers connections, each
initialized with one session; once all are open the parent says "go" and every connection sends
``--prompts`` prompts one after another, each echoing ``--words`` words as
``agent_message_chunk`` updates. The parent merges the workers' reports. Measured per server,
transport and N:

- updates/s: ``session/update`` notifications received by all workers, over the wall time from
  the first worker's start to the last one's end (every one expected is counted: a missing one
  is an error, not a lower figure);
- p50/p99 turn: from sending ``session/prompt`` to receiving the turn's ``state_update`` idle;
- RSS per connection: (server RSS with N initialized connections - RSS before) / N;
- server CPU % and load CPU % (all workers) during the load: a server near 100 % of its one core
  while the load uses less is a measure of the server, not of the load generator; and updates
  per CPU-second of the server, the figure a machine shared with other work distorts least.

Ratios are ours / ts for each transport and N, measured in the same run (on a shared machine
only those mean much); the load average at each measurement is printed. Needs node, the packages
of tests/remote (``npm install`` there, or any ``pytest tests/remote`` run) and psutil.

A server ``ours:NAME=VALUE[:NAME=VALUE...]`` is ours run with those ``serve_remote`` options
(``ours:loop=asyncio``, ``ours:loop=uvloop``): several in one ``--servers`` list are measured in
the same run, each against the same ``ts``.

    python bench/remote.py [--connections 16,256] [--transports ws,http] [--workers 2]
        [--prompts 3] [--words 40] [--servers ours,ts] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REMOTE_DIR = ROOT / "tests" / "remote"
LOAD_SCRIPT = ROOT / "bench" / "remote_load.mjs"
for path in (ROOT, ROOT / "generated"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

STARTUP_TIMEOUT = 30.0
OPEN_RATE = 20.0  # connections per second the slowest setup is given to open, at least


@dataclass
class Result:
    """One server, one transport, one connection count."""

    server: str
    transport: str
    connections: int
    updates: int
    expected: int
    updates_per_s: float
    p50_ms: float
    p99_ms: float
    rss_per_conn_kib: float
    server_cpu_pct: float
    updates_per_server_cpu_s: float
    load_cpu_pct: float
    load_processes: int
    open_s: float
    load_average: float


def raise_fd_limit() -> int:
    """Raise the soft open-file limit to the hard one (children inherit it); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def serve_ours(port: int, options: list[str]) -> None:
    """Child process: our hardened server (``serve_remote``) on 127.0.0.1:port, with ``options``
    (``NAME=VALUE`` strings) passed to it."""
    from acp_runtime import remote

    from tests.remote.support import EchoAgent

    extra: dict[str, Any] = {}
    for option in options:
        name, value = option.split("=", 1)
        extra[name] = {"true": True, "false": False}.get(value, value)
    remote.serve_remote(EchoAgent(), "127.0.0.1", port, log_level="warning", **extra)


def free_port() -> int:
    """A port free on 127.0.0.1 now (the child binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start(server: str) -> tuple[asyncio.subprocess.Process, int]:
    """Start a server child; its process and port, once it accepts connections."""
    if server.startswith("ours"):
        port = free_port()
        command = [sys.executable, str(Path(__file__).resolve()), "--serve-ours", str(port)]
        command += [f"--ours-option={option}" for option in server.split(":")[1:]]
    else:
        command = ["node", str(REMOTE_DIR / "ts_server.mjs")]
    process = await asyncio.create_subprocess_exec(
        *command, cwd=REMOTE_DIR, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    if not server.startswith("ours"):
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), STARTUP_TIMEOUT)
        return process, int(json.loads(line)["port"])
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline or process.returncode is not None:
                raise RuntimeError(f"our server did not listen on port {port}") from None
            await asyncio.sleep(0.1)
            continue
        writer.close()
        return process, port


async def stop(process: asyncio.subprocess.Process) -> None:
    """End a server child (stdin EOF for node, SIGTERM for ours)."""
    if process.stdin is not None:
        process.stdin.close()
    if process.returncode is None:
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 15)
    except TimeoutError:
        process.kill()
        await process.wait()


class Worker:
    """One node load process (bench/remote_load.mjs) and its line protocol."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, transport: str, url: str, connections: int, args: Any) -> Worker:
        """Start a load process for ``connections`` connections."""
        process = await asyncio.create_subprocess_exec(
            "node",
            str(LOAD_SCRIPT),
            transport,
            url,
            str(connections),
            str(args.prompts),
            str(args.words),
            str(args.opening),
            args.client,
            "deflate" if args.deflate else "plain",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,  # one line carries every latency
        )
        return cls(process)

    async def read(self, timeout: float) -> dict[str, Any]:
        """The worker's next report (RuntimeError on its error or death)."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            raise RuntimeError(f"load process exited {await self.process.wait()}")
        record: dict[str, Any] = json.loads(line)
        if "error" in record:
            raise RuntimeError(f"load process failed: {record['error']}")
        return record

    def say(self, word: str) -> None:
        """Send one line to the worker."""
        assert self.process.stdin is not None
        self.process.stdin.write(word.encode() + b"\n")

    async def finish(self) -> None:
        """Close its connections and wait for it to exit."""
        if self.process.returncode is None:
            with_stdin = self.process.stdin
            if with_stdin is not None and not with_stdin.is_closing():
                self.say("close")
                with_stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


def split(total: int, parts: int) -> list[int]:
    """``total`` connections over at most ``parts`` workers, as evenly as can be."""
    parts = max(1, min(parts, total))
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


async def run_load(server: str, transport: str, connections: int, args: Any) -> Result:
    """Start ``server``, put ``connections`` connections through the load, measure."""
    import psutil

    process, port = await start(server)
    scheme = "ws" if transport == "ws" else "http"
    url = f"{scheme}://127.0.0.1:{port}/acp"
    workers: list[Worker] = []
    try:
        server_process = psutil.Process(process.pid)
        if args.warm_up:  # not measured: one connection through one prompt (caches, JIT)
            warm = await Worker.start(
                transport, url, 1, argparse.Namespace(**{**vars(args), "prompts": 1})
            )
            workers.append(warm)
            await warm.read(STARTUP_TIMEOUT)
            warm.say("go")
            await warm.read(STARTUP_TIMEOUT)
            await warm.finish()
            workers.clear()
            await asyncio.sleep(args.settle)
        before = server_process.memory_info().rss
        began = time.perf_counter()
        for share in split(connections, args.workers):
            workers.append(await Worker.start(transport, url, share, args))
        open_timeout = STARTUP_TIMEOUT + connections / OPEN_RATE
        await asyncio.gather(*(w.read(open_timeout) for w in workers))
        open_s = time.perf_counter() - began
        await asyncio.sleep(args.settle)
        after = server_process.memory_info().rss
        load_average = os.getloadavg()[0]
        loads = [psutil.Process(w.process.pid) for w in workers]
        cpu_before = [p.cpu_times() for p in (server_process, *loads)]
        wall_before = time.perf_counter()
        for worker in workers:
            worker.say("go")
        reports = await asyncio.gather(*(w.read(120 + connections * 0.5) for w in workers))
        wall = time.perf_counter() - wall_before
        cpu_after = [p.cpu_times() for p in (server_process, *loads)]
    finally:
        await asyncio.gather(*(w.finish() for w in workers))
        await stop(process)
    used = [
        a.user + a.system - b.user - b.system for a, b in zip(cpu_after, cpu_before, strict=True)
    ]
    errors = [e for r in reports for e in r["errors"]]
    updates = sum(r["updates"] for r in reports)
    expected = sum(r["expected"] for r in reports)
    if errors or updates != expected:
        raise RuntimeError(
            f"{server} {transport} N={connections}: {updates} of {expected} updates; {errors[:3]}"
        )
    latencies = sorted(x for r in reports for x in r["latencies_ms"])
    duration = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return Result(
        server=server,
        transport=transport,
        connections=connections,
        updates=updates,
        expected=expected,
        updates_per_s=updates / duration,
        p50_ms=statistics.median(latencies),
        p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        rss_per_conn_kib=(after - before) / connections / 1024,
        server_cpu_pct=100 * used[0] / wall,
        updates_per_server_cpu_s=updates / used[0] if used[0] > 0 else 0.0,
        load_cpu_pct=100 * sum(used[1:]) / wall,
        load_processes=len(reports),
        open_s=open_s,
        load_average=load_average,
    )


def ratios(results: list[Result]) -> list[dict[str, Any]]:
    """ours / ts for every transport and N measured for both."""
    found = {(r.server, r.transport, r.connections): r for r in results}
    rows = []
    for (server, transport, n), ours in found.items():
        ts = found.get(("ts", transport, n))
        if not server.startswith("ours") or ts is None:
            continue
        rss = ours.rss_per_conn_kib / ts.rss_per_conn_kib if ts.rss_per_conn_kib > 0 else None
        rows.append(
            {
                "server": server,
                "transport": transport,
                "connections": n,
                "updates_per_s": ours.updates_per_s / ts.updates_per_s,
                "updates_per_cpu_s": (
                    ours.updates_per_server_cpu_s / ts.updates_per_server_cpu_s
                    if ts.updates_per_server_cpu_s > 0
                    else None
                ),
                "p50": ours.p50_ms / ts.p50_ms,
                "p99": ours.p99_ms / ts.p99_ms,
                "rss_per_conn": rss,
            }
        )
    return rows


async def main(args: argparse.Namespace) -> None:
    """Run every server at every transport and connection count; print the table and ratios."""
    limit = raise_fd_limit()
    print(
        f"{os.cpu_count()} CPUs, open files {limit}, {args.workers} {args.client} load processes",
        flush=True,
    )
    results: list[Result] = []
    failures: list[str] = []
    for n in [int(n) for n in args.connections.split(",")]:
        for transport in args.transports.split(","):
            for server in args.servers.split(","):
                try:
                    r = await run_load(server, transport, n, args)
                except (RuntimeError, TimeoutError, OSError) as exc:
                    failures.append(f"{server} {transport} N={n}: {exc!r}"[:2000])
                    print(f"FAILED {failures[-1]}", flush=True)
                    continue
                results.append(r)
                print(
                    f"{r.server:18} {r.transport:4} N={n:5} {r.updates_per_s:8.0f} updates/s  "
                    f"p50 {r.p50_ms:7.1f} ms  p99 {r.p99_ms:7.1f} ms  "
                    f"RSS/conn {r.rss_per_conn_kib:6.1f} KiB  CPU server {r.server_cpu_pct:3.0f}% "
                    f"({r.updates_per_server_cpu_s:6.0f} updates/CPU-s) "
                    f"load {r.load_cpu_pct:3.0f}%  open {r.open_s:5.1f} s  "
                    f"loadavg {r.load_average:4.1f}",
                    flush=True,
                )
    rows = ratios(results)
    if rows:
        print("\nratios ours/ts (updates/s: >1 is better; latency and RSS/conn: <1 is better)")
        for row in rows:
            rss = "n/a" if row["rss_per_conn"] is None else f"{row['rss_per_conn']:.2f}"
            per_cpu = row["updates_per_cpu_s"]
            print(
                f"{row['server']:18} {row['transport']:4} N={row['connections']:5}  "
                f"updates/s {row['updates_per_s']:.2f}  "
                f"updates/CPU-s {'n/a' if per_cpu is None else f'{per_cpu:.2f}'}  "
                f"p50 {row['p50']:.2f}  "
                f"p99 {row['p99']:.2f}  RSS/conn {rss}"
            )
    if args.json:
        report = {"results": [asdict(r) for r in results], "ratios": rows, "failures": failures}
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    if failures:
        raise SystemExit(f"{len(failures)} run(s) failed (above)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="16,256")
    parser.add_argument("--transports", default="ws,http")
    parser.add_argument("--workers", type=int, default=2, help="node load processes")
    parser.add_argument("--opening", type=int, default=16, help="connections each opens at once")
    parser.add_argument(
        "--client", default="raw", choices=("raw", "sdk"), help="what the load processes run"
    )
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="raw WebSocket clients offer permessage-deflate (as browsers do)",
    )
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--servers", default="ours,ts")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false", help="(smoke runs)")
    parser.add_argument("--settle", type=float, default=0.5, help="seconds before reading RSS")
    parser.add_argument("--json", help="also write the results and ratios to this file")
    parser.add_argument("--serve-ours", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ours-option", action="append", default=[], help=argparse.SUPPRESS)
    arguments, _ = parser.parse_known_args()  # `nox -s bench -- ...` passes other scripts' options
    if arguments.serve_ours:
        serve_ours(arguments.serve_ours, arguments.ours_option)
    else:
        asyncio.run(main(arguments))
