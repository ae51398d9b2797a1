"""End-to-end JSON-RPC throughput over a real pipe between two processes.

Contenders (both speak ACP v1 over stdio; the agent is a child process started with
``sys.executable``, the client is this process):

- ``generated``: the generated ``acp_v1`` package (``serve_agent`` / ``connect_agent``),
- ``package``: the PyPI ``agent-client-protocol`` package (``acp.run_agent`` /
  ``acp.spawn_agent_process``).

Measured, for each:

- request/response round trips per second for a no-op ``session/prompt`` (the agent answers
  ``{"stopReason": "end_turn"}`` immediately) with 1 and with 16 requests in flight,
- one-way ``session/update`` notifications per second: the agent sends N ``agent_message_chunk``
  updates as fast as it can, then a marker chunk; the client counts them and times from the first
  received update to the marker.

Each round runs every contender in alternating order; the table shows medians over rounds.

    python bench/rpc.py [--rounds 3] [--requests 3000] [--concurrent-requests 10000] [--updates 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))

MARKER = "__end__"
STEP_TIMEOUT = 60.0  # seconds: hard bound on any single measurement

GENERATED_AGENT = textwrap.dedent(
    '''
    import asyncio
    import acp_v1 as acp

    MARKER = "__end__"

    class BenchAgent(acp.Agent):
        async def initialize(self, params):
            return acp.InitializeResponse.from_dict({"protocolVersion": params.protocol_version})

        async def session_new(self, params):
            return acp.NewSessionResponse.from_dict({"sessionId": "sess_bench"})

        async def session_prompt(self, params):
            text = params.prompt[0].text
            if text.startswith("flood "):
                n = int(text.split()[1])
                session = params.session_id
                send = self.peer.session_update
                for i in range(n):
                    await send(acp.SessionNotification.from_dict({"sessionId": session, "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "chunk"}}}))
                await send(acp.SessionNotification.from_dict({"sessionId": session, "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": MARKER}}}))
            return acp.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.serve_agent(BenchAgent()))
    '''
)

PACKAGE_AGENT = textwrap.dedent(
    '''
    import asyncio
    import acp
    from acp.schema import AgentMessageChunk, TextContentBlock

    MARKER = "__end__"

    class BenchAgent:
        def on_connect(self, conn):
            self.conn = conn

        async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
            return acp.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd, mcp_servers=None, **kwargs):
            return acp.NewSessionResponse(session_id="sess_bench")

        async def prompt(self, prompt, session_id, **kwargs):
            text = prompt[0].text
            if text.startswith("flood "):
                n = int(text.split()[1])
                send = self.conn.session_update
                for i in range(n):
                    await send(session_id=session_id, update=AgentMessageChunk(
                        session_update="agent_message_chunk",
                        content=TextContentBlock(type="text", text="chunk")))
                await send(session_id=session_id, update=AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=MARKER)))
            return acp.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(BenchAgent()))
    '''
)


class Counter:
    """Receiving-side tally of flood updates (shared by both client implementations)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self.first = 0.0
        self.last = 0.0
        self.done = asyncio.Event()

    def hit(self, text: str) -> None:
        now = time.perf_counter()
        if self.count == 0:
            self.first = now
        self.count += 1
        if text == MARKER:
            self.last = now
            self.done.set()


# --------------------------------------------------------------------------- measurement helpers


async def _round_trips(call: Callable[[], Awaitable[Any]], total: int, concurrency: int, budget: float) -> float:
    """Run up to ``total`` calls with ``concurrency`` in flight (or until ``budget`` s); return calls/s."""
    done = 0
    issued = 0
    deadline = time.perf_counter() + budget

    async def worker() -> None:
        nonlocal done, issued
        while issued < total and time.perf_counter() < deadline:
            issued += 1
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(concurrency))), STEP_TIMEOUT)
    elapsed = time.perf_counter() - start
    return done / elapsed


async def _flood(counter: Counter, trigger: Callable[[], Awaitable[Any]], n: int) -> float:
    counter.reset()
    await asyncio.wait_for(trigger(), STEP_TIMEOUT)
    await asyncio.wait_for(counter.done.wait(), STEP_TIMEOUT)
    if counter.count != n + 1:
        raise RuntimeError(f"expected {n + 1} updates, got {counter.count}")
    # The first update is the start mark; n intervals follow it.
    return n / (counter.last - counter.first)


def _command(script: Path, args: argparse.Namespace, name: str) -> list[str]:
    if args.profile is None:
        return [sys.executable, str(script)]
    out = Path(args.profile) / f"{name}-agent-{os.getpid()}-{time.monotonic_ns()}.prof"
    return [sys.executable, "-m", "cProfile", "-o", str(out), str(script)]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(GENERATED), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


# --------------------------------------------------------------------------- contenders


async def run_generated(script: Path, args: argparse.Namespace) -> dict[str, float]:
    import acp_v1 as acp

    counter = Counter()

    class BenchClient(acp.Client):
        async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
            counter.hit(update.content.text)

    agent, connection, process = await acp.connect_agent(_command(script, args, "generated"), BenchClient(), env=_env())
    results: dict[str, float] = {}
    try:
        async with connection:
            await agent.initialize(acp.InitializeRequest.from_dict({"protocolVersion": 1}))
            session = (await agent.session_new(acp.NewSessionRequest.from_dict({"cwd": "/tmp", "mcpServers": []}))).session_id

            async def prompt() -> None:
                response = await agent.session_prompt(
                    acp.PromptRequest.from_dict({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
                )
                assert response.stop_reason == "end_turn"

            async def flood() -> None:
                await agent.session_prompt(
                    acp.PromptRequest.from_dict({"sessionId": session, "prompt": [{"type": "text", "text": f"flood {args.updates}"}]})
                )

            await _round_trips(prompt, args.warmup, 4, args.budget)
            results["rr1"] = await _round_trips(prompt, args.requests, 1, args.budget)
            results["rr16"] = await _round_trips(prompt, args.concurrent_requests, 16, args.budget)
            results["notify"] = await _flood(counter, flood, args.updates)
    finally:
        await _reap(process)
    return results


async def run_package(script: Path, args: argparse.Namespace) -> dict[str, float]:
    import acp
    from acp.schema import TextContentBlock

    counter = Counter()

    class BenchClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            counter.hit(update.content.text)

        async def request_permission(self, *a: Any, **k: Any) -> Any:  # pragma: no cover - unused
            raise NotImplementedError

    results: dict[str, float] = {}
    async with acp.spawn_agent_process(BenchClient(), *_command(script, args, "package"), env=_env()) as (conn, process):
        try:
            await conn.initialize(protocol_version=1)
            session = (await conn.new_session(cwd="/tmp", mcp_servers=[])).session_id

            async def prompt() -> None:
                response = await conn.prompt(session_id=session, prompt=[TextContentBlock(type="text", text="hi")])
                assert response.stop_reason == "end_turn"

            async def flood() -> None:
                await conn.prompt(session_id=session, prompt=[TextContentBlock(type="text", text=f"flood {args.updates}")])

            await _round_trips(prompt, args.warmup, 4, args.budget)
            results["rr1"] = await _round_trips(prompt, args.requests, 1, args.budget)
            results["rr16"] = await _round_trips(prompt, args.concurrent_requests, 16, args.budget)
            results["notify"] = await _flood(counter, flood, args.updates)
        finally:
            if process.stdin is not None:
                process.stdin.close()
    await _reap(process)
    return results


async def _reap(process: asyncio.subprocess.Process) -> None:
    try:
        await asyncio.wait_for(process.wait(), 10)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()


# --------------------------------------------------------------------------- main

METRICS = [
    ("rr1", "session/prompt round trips/s, 1 in flight"),
    ("rr16", "session/prompt round trips/s, 16 in flight"),
    ("notify", "session/update notifications/s (received)"),
]


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="acp-rpc-bench-") as tmp:
        gen_script = Path(tmp) / "generated_agent.py"
        pkg_script = Path(tmp) / "package_agent.py"
        gen_script.write_text(GENERATED_AGENT)
        pkg_script.write_text(PACKAGE_AGENT)
        contenders: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
            "generated": lambda: run_generated(gen_script, args),
            "package": lambda: run_package(pkg_script, args),
        }
        if args.only:
            contenders = {args.only: contenders[args.only]}
        samples: dict[str, dict[str, list[float]]] = {name: {m: [] for m, _ in METRICS} for name in contenders}
        names = list(contenders)
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                if args.profile is not None:
                    import cProfile

                    profiler = cProfile.Profile()
                    profiler.enable()
                    result = await contenders[name]()
                    profiler.disable()
                    profiler.dump_stats(Path(args.profile) / f"{name}-client-{r}.prof")
                else:
                    result = await contenders[name]()
                for metric, value in result.items():
                    samples[name][metric].append(value)
                print(
                    f"round {r + 1}/{args.rounds} {name:9s} "
                    + "  ".join(f"{m}={result[m]:,.0f}/s" for m, _ in METRICS),
                    flush=True,
                )

    if len(samples) < 2:
        return
    import importlib.metadata

    version = importlib.metadata.version("agent-client-protocol")
    print()
    print(f"Python {sys.version.split()[0]}; agent-client-protocol {version}; medians of {args.rounds} rounds")
    print(
        f"round trips: {args.requests} (1 in flight), {args.concurrent_requests} (16 in flight); "
        f"notifications: {args.updates} + marker"
    )
    print()
    header = f"{'metric':44s} {'generated acp_v1':>17s} {'PyPI acp':>12s} {'ratio':>7s} {'paired':>7s}"
    print(header)
    print("-" * len(header))
    for metric, label in METRICS:
        gen = statistics.median(samples["generated"][metric])
        pkg = statistics.median(samples["package"][metric])
        # paired: median of the per-round ratios (adjacent runs), less sensitive to machine drift
        paired = statistics.median(g / p for g, p in zip(samples["generated"][metric], samples["package"][metric]))
        print(f"{label:44s} {gen:>17,.0f} {pkg:>12,.0f} {gen / pkg:>6.2f}x {paired:>6.2f}x")
    print()
    print("ratio = median(generated) / median(package); paired = median over rounds of generated/package")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3000, help="round trips with 1 in flight")
    parser.add_argument("--concurrent-requests", type=int, default=10000, help="round trips with 16 in flight")
    parser.add_argument("--updates", type=int, default=20000, help="notifications in the flood")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--budget", type=float, default=20.0, help="max seconds per round-trip measurement")
    parser.add_argument("--only", choices=["generated", "package"], help="run one contender (profiling)")
    parser.add_argument("--profile", metavar="DIR", help="write cProfile stats of both processes to DIR")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
