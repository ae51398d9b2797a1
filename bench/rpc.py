"""End-to-end JSON-RPC throughput over a real pipe between two processes.

Contenders (both speak ACP v1 over stdio; the agent is a child process started with
``sys.executable``, the client is this process):

- ``generated``: the generated ``acp_v1`` package (``serve_agent`` / ``connect_agent``),
- ``package``: the PyPI ``agent-client-protocol`` package (``acp.run_agent`` /
  ``acp.spawn_agent_process``).

Both do the same work with their defaults: the receiving side of every message parses it and
validates it into that package's models (request params, response results, each
``session/update``), and the benchmark's handlers read a field of what they got.

Measured, for each:

- request/response round trips per second for a no-op ``session/prompt`` (the agent answers
  ``{"stopReason": "end_turn"}`` immediately) with 1 and with 16 requests in flight,
- one-way ``session/update`` notifications per second: the agent sends N ``agent_message_chunk``
  updates as fast as it can, then a marker chunk; the client counts them and times from the first
  received update to the marker,
- for each of those, the CPU time both processes spent per operation (client + agent, from
  ``time.process_time`` and ``/proc/<pid>/stat``): what the two runtimes cost, whatever the
  scheduler did.

CPU placement (``--placement``). On a small VM the wall-clock figures depend on where the kernel
puts the two processes: a wake-up across CPUs can cost far more than the work of a message (on
the 2-vCPU machine this was written on, a bare asyncio echo over a pipe takes ~35 us per round
trip on one CPU and ~170 us across two), and unpinned runs flip between the two, which made
earlier figures swing by 2x. So every round runs each contender under each placement, pinned
with ``sched_setaffinity``, the same for both:

- ``same``: client and agent on one CPU (no cross-CPU wake-ups: mostly the runtimes' own cost),
- ``split``: client on one CPU, agent on another (two wake-ups per round trip, plus parallelism
  for the notification flood),
- ``none``: no pinning (whatever the scheduler does; noisy on small VMs).

Each round runs every contender in alternating order (ABBA); the table shows medians over rounds,
the spread (min-max) and the median of the per-round ratios.

    python bench/rpc.py [--rounds 5] [--placement same,split] [--requests 5000]
                        [--concurrent-requests 20000] [--updates 50000]
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
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))

MARKER = "__end__"
STEP_TIMEOUT = 60.0  # seconds: hard bound on any single measurement

GENERATED_AGENT = textwrap.dedent("""
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
    """)

# The floor: the same traffic with no JSON-RPC runtime at all. The child echoes a canned
# response line for each request line (no parsing), or writes N canned update lines; the client
# matches responses in order and counts update lines by looking at their bytes.
FLOOR_AGENT = textwrap.dedent("""
    import asyncio, sys

    RESPONSE = b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}\\n'
    CHUNK = (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench",'
             b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk"}}}}\\n')
    MARKER = CHUNK.replace(b'"chunk"', b'"__end__"')

    async def main():
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        while line := await reader.readline():
            if line.startswith(b"flood "):
                for _ in range(int(line.split()[1])):
                    writer.write(CHUNK)
                    if transport.get_write_buffer_size() > 1 << 16:
                        await writer.drain()
                writer.write(MARKER)
            writer.write(RESPONSE)

    asyncio.run(main())
    """)

PACKAGE_AGENT = textwrap.dedent("""
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
    """)


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

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _child_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a child has used so far, from /proc (None elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass
class Sample:
    """One measurement: operations per second and CPU microseconds per operation."""

    rate: float
    cpu_us: float | None


class Meter:
    """Wall clock and CPU time of both processes over one measurement."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> Self:
        self.cpu = time.process_time()
        self.child = _child_cpu(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.cpu
        child = _child_cpu(self.pid)
        self.child = None if child is None or self.child is None else child - self.child

    def sample(self, rate: float, operations: int) -> Sample:
        if self.child is None:
            return Sample(rate, None)
        return Sample(rate, (self.cpu + self.child) / operations * 1e6)


async def _round_trips(
    call: Callable[[], Awaitable[Any]], total: int, concurrency: int, budget: float
) -> tuple[float, int]:
    """Run up to ``total`` calls with ``concurrency`` in flight (or until ``budget`` s); (calls/s, calls)."""
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
    return done / elapsed, done


async def _flood(counter: Counter, trigger: Callable[[], Awaitable[Any]], n: int) -> float:
    counter.reset()
    await asyncio.wait_for(trigger(), STEP_TIMEOUT)
    await asyncio.wait_for(counter.done.wait(), STEP_TIMEOUT)
    if counter.count != n + 1:
        raise RuntimeError(f"expected {n + 1} updates, got {counter.count}")
    # The first update is the start mark; n intervals follow it.
    return n / (counter.last - counter.first)


async def _measure(
    pid: int,
    args: argparse.Namespace,
    prompt: Callable[[], Awaitable[Any]],
    flood: Callable[[int], Awaitable[Any]],
    counter: Counter,
) -> dict[str, Sample]:
    """The same sequence for every contender: warm-up, 1 in flight, 16 in flight, flood."""
    await _round_trips(prompt, args.warmup, 4, args.budget)
    counter.reset()
    await flood(args.warmup)
    await asyncio.wait_for(counter.done.wait(), STEP_TIMEOUT)
    results: dict[str, Sample] = {}
    with Meter(pid) as meter:
        rate, done = await _round_trips(prompt, args.requests, 1, args.budget)
    results["rr1"] = meter.sample(rate, done)
    with Meter(pid) as meter:
        rate, done = await _round_trips(prompt, args.concurrent_requests, 16, args.budget)
    results["rr16"] = meter.sample(rate, done)
    with Meter(pid) as meter:
        rate = await _flood(counter, lambda: flood(args.updates), args.updates)
    results["notify"] = meter.sample(rate, args.updates)
    return results


def _command(script: Path, args: argparse.Namespace, name: str) -> list[str]:
    if args.profile is None:
        return [sys.executable, str(script)]
    out = Path(args.profile) / f"{name}-agent-{os.getpid()}-{time.monotonic_ns()}.prof"
    return [sys.executable, "-m", "cProfile", "-o", str(out), str(script)]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(GENERATED), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


# --------------------------------------------------------------------------- placement

_ALL_CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _place_self(placement: str) -> None:
    """Pin this process (the client) for ``placement``; children inherit it at spawn."""
    if not _ALL_CPUS:
        return
    os.sched_setaffinity(0, set(_ALL_CPUS) if placement == "none" else {_ALL_CPUS[0]})


def _place_child(placement: str, pid: int) -> None:
    if placement == "split" and len(_ALL_CPUS) > 1:
        os.sched_setaffinity(pid, {_ALL_CPUS[1]})


# --------------------------------------------------------------------------- contenders


async def run_generated(
    script: Path, args: argparse.Namespace, placement: str = "none"
) -> dict[str, Sample]:
    import acp_v1 as acp

    counter = Counter()

    class BenchClient(acp.Client):
        async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
            counter.hit(update.content.text)

    agent, connection, process = await acp.connect_agent(
        _command(script, args, "generated"), BenchClient(), env=_env()
    )
    _place_child(placement, process.pid)
    try:
        async with connection:
            await agent.initialize(acp.InitializeRequest.from_dict({"protocolVersion": 1}))
            session = (
                await agent.session_new(
                    acp.NewSessionRequest.from_dict({"cwd": "/tmp", "mcpServers": []})
                )
            ).session_id

            async def prompt() -> None:
                response = await agent.session_prompt(
                    acp.PromptRequest.from_dict(
                        {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
                    )
                )
                assert response.stop_reason == "end_turn"

            async def flood(n: int) -> None:
                await agent.session_prompt(
                    acp.PromptRequest.from_dict(
                        {"sessionId": session, "prompt": [{"type": "text", "text": f"flood {n}"}]}
                    )
                )

            return await _measure(process.pid, args, prompt, flood, counter)
    finally:
        await _reap(process)


async def run_package(
    script: Path, args: argparse.Namespace, placement: str = "none"
) -> dict[str, Sample]:
    import acp
    from acp.schema import TextContentBlock

    counter = Counter()

    class BenchClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            counter.hit(update.content.text)

        async def request_permission(self, *a: Any, **k: Any) -> Any:  # pragma: no cover - unused
            raise NotImplementedError

    async with acp.spawn_agent_process(
        BenchClient(), *_command(script, args, "package"), env=_env()
    ) as (conn, process):
        _place_child(placement, process.pid)
        try:
            await conn.initialize(protocol_version=1)
            session = (await conn.new_session(cwd="/tmp", mcp_servers=[])).session_id

            async def prompt() -> None:
                response = await conn.prompt(
                    session_id=session, prompt=[TextContentBlock(type="text", text="hi")]
                )
                assert response.stop_reason == "end_turn"

            async def flood(n: int) -> None:
                await conn.prompt(
                    session_id=session, prompt=[TextContentBlock(type="text", text=f"flood {n}")]
                )

            results = await _measure(process.pid, args, prompt, flood, counter)
        finally:
            if process.stdin is not None:
                process.stdin.close()
    await _reap(process)
    return results


async def run_floor(
    script: Path, args: argparse.Namespace, placement: str = "none"
) -> dict[str, Sample]:
    """Bare asyncio over the same pipes: what any runtime's figures are bounded by here."""
    counter = Counter()
    process = await asyncio.create_subprocess_exec(
        *_command(script, args, "floor"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    _place_child(placement, process.pid)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    waiting: deque[asyncio.Future[None]] = deque()

    async def read() -> None:
        while line := await stdout.readline():
            if b'"session/update"' in line:
                counter.hit(MARKER if b'"__end__"' in line else "chunk")
            elif waiting:
                waiting.popleft().set_result(None)

    reader = asyncio.create_task(read())

    async def send(line: bytes) -> None:
        future = asyncio.get_running_loop().create_future()
        waiting.append(future)
        stdin.write(line)
        await future

    async def prompt() -> None:
        await send(b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[]}}\n')

    async def flood(n: int) -> None:
        await send(f"flood {n}\n".encode())

    try:
        return await _measure(process.pid, args, prompt, flood, counter)
    finally:
        stdin.close()
        await _reap(process)
        reader.cancel()


async def _reap(process: asyncio.subprocess.Process) -> None:
    try:
        await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        process.kill()
        await process.wait()


# --------------------------------------------------------------------------- main

METRICS = [
    ("rr1", "round trips/s, 1 in flight"),
    ("rr16", "round trips/s, 16 in flight"),
    ("notify", "session/update notifications/s"),
]
PLACEMENTS = {
    "same": "client and agent on one CPU",
    "split": "client and agent on two CPUs",
    "none": "not pinned",
}


@dataclass
class Series:
    rates: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def _fmt_rate(values: list[float]) -> str:
    return f"{statistics.median(values):>9,.0f} ({min(values):,.0f}-{max(values):,.0f})"


async def main_async(args: argparse.Namespace) -> None:
    placements = [p.strip() for p in args.placement.split(",") if p.strip()]
    for placement in placements:
        if placement not in PLACEMENTS:
            raise SystemExit(
                f"unknown placement {placement!r}: choose from {', '.join(PLACEMENTS)}"
            )
    if len(_ALL_CPUS) < 2 and "split" in placements:
        print("only one CPU available: 'split' dropped", file=sys.stderr)
        placements.remove("split")
    with tempfile.TemporaryDirectory(prefix="acp-rpc-bench-") as tmp:
        gen_script = Path(tmp) / "generated_agent.py"
        pkg_script = Path(tmp) / "package_agent.py"
        floor_script = Path(tmp) / "floor_agent.py"
        gen_script.write_text(GENERATED_AGENT)
        pkg_script.write_text(PACKAGE_AGENT)
        floor_script.write_text(FLOOR_AGENT)
        contenders: dict[str, Callable[[str], Awaitable[dict[str, Sample]]]] = {
            "generated": lambda placement: run_generated(gen_script, args, placement),
            "package": lambda placement: run_package(pkg_script, args, placement),
            "floor": lambda placement: run_floor(floor_script, args, placement),
        }
        if args.only:
            contenders = {args.only: contenders[args.only]}
        samples = {
            (pl, name, m): Series() for pl in placements for name in contenders for m, _ in METRICS
        }
        names = list(contenders)
        step = 0
        try:
            for r in range(args.rounds):
                for placement in placements:
                    _place_self(placement)
                    order = names if step % 2 == 0 else names[::-1]
                    step += 1
                    for name in order:
                        if args.profile is not None:
                            import cProfile

                            profiler = cProfile.Profile()
                            profiler.enable()
                            result = await contenders[name](placement)
                            profiler.disable()
                            profiler.dump_stats(
                                Path(args.profile) / f"{name}-client-{placement}-{r}.prof"
                            )
                        else:
                            result = await contenders[name](placement)
                        for metric, sample in result.items():
                            samples[placement, name, metric].rates.append(sample.rate)
                            if sample.cpu_us is not None:
                                samples[placement, name, metric].cpu.append(sample.cpu_us)
                        print(
                            f"round {r + 1}/{args.rounds} {placement:5s} {name:9s} "
                            + "  ".join(
                                f"{m}={result[m].rate:,.0f}/s"
                                + (
                                    f" ({result[m].cpu_us:.1f} us cpu)"
                                    if result[m].cpu_us is not None
                                    else ""
                                )
                                for m, _ in METRICS
                            ),
                            flush=True,
                        )
        finally:
            _place_self("none")

    if "generated" not in contenders or "package" not in contenders:
        return
    import importlib.metadata

    version = importlib.metadata.version("agent-client-protocol")
    print()
    print(
        f"Python {sys.version.split()[0]}; agent-client-protocol {version}; {len(_ALL_CPUS)} CPUs; "
        f"medians of {args.rounds} rounds (min-max in parentheses)"
    )
    print(
        f"round trips: {args.requests} (1 in flight), {args.concurrent_requests} (16 in flight); "
        f"notifications: {args.updates} + marker"
    )
    for placement in placements:
        print()
        print(f"placement {placement}: {PLACEMENTS[placement]}")
        header = (
            f"{'metric':32s} {'generated acp_v1':>28s} {'PyPI acp':>28s} {'ratio':>6s} {'paired (min-max)':>20s}"
            f" {'cpu us/op gen':>13s} {'pkg':>6s} {'ratio':>6s}"
            + (f" {'floor (bare asyncio)':>28s} {'gen/floor':>9s}" if "floor" in contenders else "")
        )
        print(header)
        print("-" * len(header))
        for metric, label in METRICS:
            gen = samples[placement, "generated", metric]
            pkg = samples[placement, "package", metric]
            paired = [g / p for g, p in zip(gen.rates, pkg.rates, strict=True)]
            line = (
                f"{label:32s} {_fmt_rate(gen.rates):>28s} {_fmt_rate(pkg.rates):>28s} "
                f"{statistics.median(gen.rates) / statistics.median(pkg.rates):>5.2f}x "
                f"{statistics.median(paired):>5.2f}x ({min(paired):.2f}-{max(paired):.2f})"
            )
            if gen.cpu and pkg.cpu:
                g, p = statistics.median(gen.cpu), statistics.median(pkg.cpu)
                line += f" {g:>13.1f} {p:>6.1f} {p / g:>5.2f}x"
            if "floor" in contenders:
                floor = samples[placement, "floor", metric].rates
                line += f" {_fmt_rate(floor):>28s} {statistics.median(gen.rates) / statistics.median(floor):>8.0%}"
            print(line)
    print()
    print(
        "ratio = median(generated) / median(package); paired = median over rounds of generated/package;\n"
        "cpu us/op = CPU time of client + agent per operation (median); its ratio is package/generated;\n"
        "floor = the same traffic over the same pipes with bare asyncio and canned lines (no JSON-RPC\n"
        "runtime, no parsing): no runtime can be faster; gen/floor = how much of it the generated one reaches"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--placement", default="same,split", help="comma-separated: same, split, none"
    )
    parser.add_argument("--requests", type=int, default=5000, help="round trips with 1 in flight")
    parser.add_argument(
        "--concurrent-requests", type=int, default=20000, help="round trips with 16 in flight"
    )
    parser.add_argument("--updates", type=int, default=50000, help="notifications in the flood")
    parser.add_argument(
        "--warmup", type=int, default=500, help="round trips and notifications before measuring"
    )
    parser.add_argument(
        "--budget", type=float, default=20.0, help="max seconds per round-trip measurement"
    )
    parser.add_argument(
        "--only", choices=["generated", "package", "floor"], help="run one contender (profiling)"
    )
    parser.add_argument(
        "--profile", metavar="DIR", help="write cProfile stats of both processes to DIR"
    )
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
