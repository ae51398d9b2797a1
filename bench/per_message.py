"""Per-message CPU cost of the JSON-RPC runtime, in one process (issue 35, requirement 1).

Two measurements, each over real OS pipes inside one process and one event loop, so that what is
measured is the runtime's own work and not the scheduler's (CPU time of the event loop's thread,
``time.thread_time``):

- ``notify``: receiving one ``session/update`` of about 200 bytes, from the bytes in the pipe to
  the typed handler (``on_agent_message_chunk``). A thread writes the lines into the pipe (its CPU
  is not counted); the loop's thread reads, parses, validates, orders and calls the handler.
- ``rr``: one request round trip (``session/prompt``, 1 in flight), client and agent both in this
  loop: params -> bytes, bytes -> typed params -> handler, result -> bytes, bytes -> typed result.
  The figure is both runtimes' cost (as ``bench/rpc.py``'s CPU per operation is both processes').

Contenders, each doing the same work with the same models where it can:

- ``generated``: the generated ``acp_v1`` package on ``acp_runtime.jsonrpc.Connection``,
- ``package``: the PyPI ``agent-client-protocol`` SDK (``ClientSideConnection`` /
  ``AgentSideConnection``) over the same pipes,
- ``bare``: no JSON-RPC runtime: ``StreamReader.readline``, ``json.loads``, the acp_v1 model's
  ``validate_python`` and the handler call (for ``rr``: also ``to_json`` of params and result and
  a future per request). No runtime can cost less than this on these pipes.

Rounds alternate the contenders' order; the table shows medians of us of CPU per message and
the ratios of the same run (package / generated: how many times cheaper ours is; generated - bare:
the runtime's share above the floor).

    python bench/per_message.py [--rounds 5] [--updates 20000] [--requests 5000]
                                [--profile FILE]  # cProfile the generated contender only
                                [--instructions]  # instructions per message (valgrind)

``--instructions`` counts instructions instead of time, with valgrind's callgrind: each
contender runs twice with different message counts and the difference is divided by the
difference of the counts (start-up and warm-up cancel out). User-space only (no system calls),
slow (about a minute a run), but the same on a loaded machine as on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp_v1  # noqa: E402

TEXT = "a chunk of the agent's answer"
LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789abcdef",'
    b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":'
    + json.dumps(TEXT).encode()
    + b"}}}}\n"
)
WARMUP = 2000
# The PyPI SDK deprecates building its connections directly; the bench needs them on its pipes.
warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*directly is deprecated")


async def _stream_reader(file: Any) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), file)
    return reader


async def _stream_writer(file: Any) -> asyncio.StreamWriter:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), file
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)


class Tally:
    """Counts handled updates; CPU time of the loop's thread from the end of warm-up to the end."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.count = 0
        self.start = 0.0
        self.cpu = 0.0
        self.done = asyncio.Event()

    def hit(self, text: str) -> None:
        self.count += 1
        if self.count == WARMUP:
            self.start = time.thread_time()
        elif self.count == self.total:
            self.cpu = time.thread_time() - self.start
            self.done.set()


def _feed(fd: int, updates: int) -> threading.Thread:
    """Write ``updates`` lines into ``fd`` from a thread (its CPU is not the loop thread's)."""
    blob = LINE * updates

    def write() -> None:
        view = memoryview(blob)
        while view:
            view = view[os.write(fd, view[: 1 << 16]) :]
        os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# --------------------------------------------------------------------------- notify


async def notify_generated(updates: int) -> float:
    from acp_runtime.jsonrpc import Connection, open_pipe_reader

    tally = Tally(WARMUP + updates)

    class BenchClient(acp_v1.Client):
        async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
            tally.hit(update.content.text)

    r, w = os.pipe()
    out_r, out_w = os.pipe()
    reader = await open_pipe_reader(os.fdopen(r, "rb", 0))
    writer = await _stream_writer(os.fdopen(out_w, "wb", 0))
    client = BenchClient()
    connection = Connection(client, client.inbound_methods, reader, writer)
    feeder = _feed(w, WARMUP + updates)
    async with connection:
        await tally.done.wait()
    feeder.join()
    os.close(out_r)
    return tally.cpu / updates * 1e6


async def notify_package(updates: int) -> float:
    import acp

    tally = Tally(WARMUP + updates)

    class BenchClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            tally.hit(update.content.text)

    r, w = os.pipe()
    out_r, out_w = os.pipe()
    reader = await _stream_reader(os.fdopen(r, "rb", 0))
    writer = await _stream_writer(os.fdopen(out_w, "wb", 0))
    conn = acp.ClientSideConnection(BenchClient(), writer, reader)
    feeder = _feed(w, WARMUP + updates)
    await tally.done.wait()
    await conn.close()
    feeder.join()
    os.close(out_r)
    return tally.cpu / updates * 1e6


async def notify_bare(updates: int) -> float:
    tally = Tally(WARMUP + updates)
    validator = acp_v1.SessionNotification.__pydantic_validator__

    async def handler(params: Any) -> None:
        tally.hit(params.update.content.text)

    r, w = os.pipe()
    reader = await _stream_reader(os.fdopen(r, "rb", 0))
    feeder = _feed(w, WARMUP + updates)
    while line := await reader.readline():
        message = json.loads(line)
        await handler(validator.validate_python(message["params"]))
    feeder.join()
    return tally.cpu / updates * 1e6


# --------------------------------------------------------------------------- round trips


def _timed(requests: int) -> Callable[[Callable[[], Awaitable[Any]]], Awaitable[float]]:
    async def run(call: Callable[[], Awaitable[Any]]) -> float:
        for _ in range(WARMUP // 4):
            await call()
        start = time.thread_time()
        for _ in range(requests):
            await call()
        return (time.thread_time() - start) / requests * 1e6

    return run


def _prompt_params() -> dict[str, Any]:
    return {"sessionId": "sess_0123456789abcdef", "prompt": [{"type": "text", "text": "hi"}]}


async def rr_generated(requests: int) -> float:
    from acp_runtime.jsonrpc import Connection, open_pipe_reader

    class BenchAgent(acp_v1.Agent):
        async def session_prompt(self, params: Any) -> Any:
            return acp_v1.PromptResponse(stop_reason="end_turn")

    a_r, c_w = os.pipe()
    c_r, a_w = os.pipe()
    agent, client = BenchAgent(), acp_v1.Client()
    agent_conn = Connection(
        agent,
        agent.inbound_methods,
        await open_pipe_reader(os.fdopen(a_r, "rb", 0)),
        await _stream_writer(os.fdopen(a_w, "wb", 0)),
    )
    client_conn = Connection(
        client,
        client.inbound_methods,
        await open_pipe_reader(os.fdopen(c_r, "rb", 0)),
        await _stream_writer(os.fdopen(c_w, "wb", 0)),
    )
    peer = client.attach(client_conn)
    params = _prompt_params()
    async with agent_conn, client_conn:

        async def call() -> None:
            response = await peer.session_prompt(acp_v1.PromptRequest.from_dict(params))
            assert response.stop_reason == "end_turn"

        return await _timed(requests)(call)


async def rr_package(requests: int) -> float:
    import acp
    from acp.schema import TextContentBlock

    class BenchAgent:
        async def prompt(self, prompt: Any, session_id: str, **kwargs: Any) -> Any:
            return acp.PromptResponse(stop_reason="end_turn")

    class BenchClient:
        async def session_update(self, *a: Any, **k: Any) -> None:  # pragma: no cover - unused
            pass

    a_r, c_w = os.pipe()
    c_r, a_w = os.pipe()
    agent_conn = acp.AgentSideConnection(
        BenchAgent(),
        await _stream_writer(os.fdopen(a_w, "wb", 0)),
        await _stream_reader(os.fdopen(a_r, "rb", 0)),
    )
    conn = acp.ClientSideConnection(
        BenchClient(),
        await _stream_writer(os.fdopen(c_w, "wb", 0)),
        await _stream_reader(os.fdopen(c_r, "rb", 0)),
    )
    params = _prompt_params()

    async def call() -> None:
        response = await conn.prompt(
            session_id=params["sessionId"], prompt=[TextContentBlock(type="text", text="hi")]
        )
        assert response.stop_reason == "end_turn"

    try:
        return await _timed(requests)(call)
    finally:
        await conn.close()
        await agent_conn.close()


async def rr_bare(requests: int) -> float:
    """Both ends with no runtime: one reader task each, a future per request."""

    a_r, c_w = os.pipe()
    c_r, a_w = os.pipe()
    agent_in = await _stream_reader(os.fdopen(a_r, "rb", 0))
    agent_out = await _stream_writer(os.fdopen(a_w, "wb", 0))
    client_in = await _stream_reader(os.fdopen(c_r, "rb", 0))
    client_out = await _stream_writer(os.fdopen(c_w, "wb", 0))
    params_validator = acp_v1.PromptRequest.__pydantic_validator__
    result_validator = acp_v1.PromptResponse.__pydantic_validator__
    waiting: dict[int, asyncio.Future[Any]] = {}

    async def handle(params: Any) -> Any:
        return acp_v1.PromptResponse(stop_reason="end_turn")

    async def agent() -> None:
        while line := await agent_in.readline():
            message = json.loads(line)
            result = await handle(params_validator.validate_python(message["params"]))
            agent_out.write(
                b'{"jsonrpc":"2.0","id":%d,"result":' % message["id"]
                + result.__pydantic_serializer__.to_json(result, by_alias=True, exclude_unset=True)
                + b"}\n"
            )

    async def client() -> None:
        while line := await client_in.readline():
            message = json.loads(line)
            waiting.pop(message["id"]).set_result(message["result"])

    tasks = [asyncio.create_task(agent()), asyncio.create_task(client())]
    next_id = 0
    params = _prompt_params()

    async def call() -> None:
        nonlocal next_id
        next_id += 1
        future = asyncio.get_running_loop().create_future()
        waiting[next_id] = future
        request = acp_v1.PromptRequest.from_dict(params)
        client_out.write(
            b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":' % next_id
            + request.__pydantic_serializer__.to_json(request, by_alias=True, exclude_unset=True)
            + b"}\n"
        )
        response = result_validator.validate_python(await future)
        assert response.stop_reason == "end_turn"

    try:
        return await _timed(requests)(call)
    finally:
        client_out.close()
        agent_out.close()
        for task in tasks:
            task.cancel()


# --------------------------------------------------------------------------- main

CONTENDERS: dict[str, dict[str, Callable[[int], Awaitable[float]]]] = {
    "notify": {"generated": notify_generated, "package": notify_package, "bare": notify_bare},
    "rr": {"generated": rr_generated, "package": rr_package, "bare": rr_bare},
}


def instructions(kind: str, name: str) -> float:
    """Instructions per message of one contender under callgrind (see the module docstring)."""
    small, large = (1000, 5000) if kind == "notify" else (300, 1300)
    option = "--updates" if kind == "notify" else "--requests"
    counts = []
    for n in (small, large):
        command = [sys.executable, __file__, "--rounds", "1", "--measure", kind, "--only", name]
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
            + [option, str(n)],
            capture_output=True,
            text=True,
            check=True,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from valgrind: {done.stderr[-500:]}")
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / (large - small)


def _share(package: float, generated: float) -> str:
    """The share ratio, or why there is none (the generated runtime at or below the bare floor:
    the bare contender parses with the standard `json`, slower than pydantic-core's parser)."""
    return f"{package / generated:.2f}x" if generated > 0 else "below bare"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--updates", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--profile", metavar="FILE", help="cProfile the generated contender")
    parser.add_argument("--only", choices=["generated", "package", "bare"], help="one contender")
    parser.add_argument("--measure", choices=list(CONTENDERS), help="one measurement")
    parser.add_argument(
        "--instructions", action="store_true", help="instructions per message (callgrind)"
    )
    args = parser.parse_args()
    counts = {"notify": args.updates, "rr": args.requests}
    if args.instructions:
        for kind, contenders in CONTENDERS.items():
            if args.measure and kind != args.measure:
                continue
            found = {}
            for name in [args.only] if args.only else list(contenders):
                found[name] = instructions(kind, name)
                print(f"{kind:6s} {name:9s} {found[name]:10,.0f} instructions", flush=True)
            if len(found) == 3:
                gen, pkg, bare = found["generated"], found["package"], found["bare"]
                print(
                    f"{kind:6s} package/generated {pkg / gen:.2f}x; above bare: generated "
                    f"{gen - bare:,.0f}, package {pkg - bare:,.0f} ({_share(pkg - bare, gen - bare)})"
                )
        return
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        for kind in CONTENDERS:
            if not args.measure or kind == args.measure:
                asyncio.run(CONTENDERS[kind][args.only or "generated"](counts[kind]))
        profiler.disable()
        profiler.dump_stats(args.profile)
        return
    results: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for kind, contenders in CONTENDERS.items():
            if args.measure and kind != args.measure:
                continue
            names = list(contenders) if r % 2 == 0 else list(contenders)[::-1]
            if args.only:
                names = [args.only]
            for name in names:
                us = asyncio.run(contenders[name](counts[kind]))
                results.setdefault((kind, name), []).append(us)
                print(f"round {r + 1}/{args.rounds} {kind:6s} {name:9s} {us:7.2f} us", flush=True)
    if args.only or args.measure:
        return
    import importlib.metadata

    print()
    print(
        f"Python {sys.version.split()[0]}; agent-client-protocol "
        f"{importlib.metadata.version('agent-client-protocol')}; load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
        + f"; medians of {args.rounds} rounds; us of CPU (event loop thread) per message"
    )
    header = (
        f"{'measure':8s} {'generated':>10s} {'package':>10s} {'bare':>10s} "
        f"{'pkg/gen':>8s} {'gen-bare':>9s} {'pkg-bare':>9s} {'share ratio':>11s}"
    )
    print(header)
    print("-" * len(header))
    for kind in CONTENDERS:
        gen, pkg, bare = (statistics.median(results[kind, n]) for n in CONTENDERS[kind])
        print(
            f"{kind:8s} {gen:10.2f} {pkg:10.2f} {bare:10.2f} {pkg / gen:7.2f}x "
            f"{gen - bare:9.2f} {pkg - bare:9.2f} {_share(pkg - bare, gen - bare):>11s}"
        )
    print(
        "\nnotify: bytes in the pipe -> typed handler, one session/update of "
        f"{len(LINE)} bytes; rr: one session/prompt round trip, both ends' cost.\n"
        "pkg/gen = package / generated (how many times less CPU ours takes); gen-bare, pkg-bare =\n"
        "each runtime's cost above the bare floor; share ratio = (pkg-bare) / (gen-bare)."
    )


if __name__ == "__main__":
    main()
