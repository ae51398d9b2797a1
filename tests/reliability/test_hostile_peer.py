"""A hostile peer over real pipes against a generated-package agent in a subprocess.

The agent (`hostile_agent.py`, acp_v2_draft's `serve_agent`) must answer every malformed input
with the JSON-RPC error the spec names and keep working, leak no traceback or internal detail,
lose or reorder nothing it received, end cleanly when its peer vanishes or stops reading, and stay
under MEMORY_BOUND of peak RSS above its own baseline (read from /proc) whatever it is sent. Its
stderr is a pipe nobody reads: a log line per hostile message would block it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
GENERATED = HERE.parents[1] / "generated"
TIMEOUT = 20.0
MEMORY_BOUND = 64 * 1024  # kB of peak RSS over the agent's baseline
LEAKS = ("Traceback", "hunter2", "secret.conf", 'File "', ".py", "Error:")
PARSE, INVALID, NOT_FOUND, INTERNAL, CANCELLED = -32700, -32600, -32601, -32603, -32800


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"{field} missing")  # pragma: no cover


@dataclass
class Agent:
    process: asyncio.subprocess.Process
    log: Path
    next_id: int = 1000
    baseline_kb: int = 0

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    async def send(self, data: bytes) -> None:
        self.stdin.write(data)
        await self.stdin.drain()

    async def recv(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.stdout.readline(), TIMEOUT)
        assert line.endswith(b"\n"), line[:200]
        for leak in LEAKS:
            assert leak.encode() not in line, line[:300]
        message = json.loads(line)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0"
        return message

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        await self.send(json.dumps(message).encode() + b"\n")
        reply = await self.recv()
        assert reply["id"] == self.next_id, reply
        return reply

    async def assert_alive(self) -> None:
        reply = await self.call("_echo", {"alive": True})
        assert reply["result"] == {"echo": {"alive": True}}

    def peak_over_baseline(self) -> int:
        return _status(self.process.pid, "VmHWM") - self.baseline_kb

    async def exit_status_and_peak(self) -> tuple[int, int]:
        """Wait for the agent to exit, sampling its peak RSS over the baseline meanwhile."""
        peak = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while self.process.returncode is None and loop.time() < deadline:
            try:
                peak = max(peak, self.peak_over_baseline())
            except (FileNotFoundError, ProcessLookupError, AssertionError):
                pass  # exiting
            try:
                await asyncio.wait_for(self.process.wait(), 0.05)
            except TimeoutError:
                pass
        return await asyncio.wait_for(self.process.wait(), 1), peak


@asynccontextmanager
async def agent(tmp_path: Path, **env: str) -> AsyncIterator[Agent]:
    log = tmp_path / "ran.log"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "hostile_agent.py"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,  # never read: logging must not block the agent
        env={**os.environ, "PYTHONPATH": str(GENERATED), "AGENT_LOG": str(log), **env},
        limit=1 << 24,
    )
    peer = Agent(process, log)
    try:
        await peer.assert_alive()
        peer.baseline_kb = _status(process.pid, "VmRSS")
        yield peer
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def frame(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode() + b"\n"


HOSTILE: list[tuple[bytes, int, Any]] = [
    (b"not json at all\n", PARSE, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"_echo","params":{"t":"\xff\xfe"}}\n', PARSE, 1),
    (b'{"jsonrpc":"2.0","id":2,"method":"_echo","params":{"t":"cut\n', PARSE, 2),
    (b"[" * 100_000 + b"\n", PARSE, None),  # deep nesting
    (b'{"jsonrpc":"2.0","id":3,"method":"_echo","params":' + b"[" * 100_000 + b"\n", PARSE, 3),
    (b'{"jsonrpc":"2.0","id":4,"method":"_echo","params":{"n":1e999}}\n', PARSE, 4),
    (b'{"jsonrpc":"2.0","id":5,"method":"_echo","params":{"n":NaN}}\n', PARSE, 5),
    (frame(id=1.5, method="_echo"), INVALID, None),
    (frame(id={"an": "object"}, method="_echo"), INVALID, None),
    (frame(id=[1], method="_echo"), INVALID, None),
    (frame(id=True, method="_echo"), INVALID, None),
    (frame(id="s" * 100_000, method="_echo"), INVALID, None),
    (frame(id=1 << 70, method="_echo"), INVALID, None),
    (frame(id=6, method=["not", "a", "string"]), INVALID, 6),
    (frame(id=7, method="_echo", params="scalar"), INVALID, 7),
    (
        b'{"jsonrpc":"2.0","id":8,"method":"_echo","params":{"t":"' + b"o" * (2 << 20) + b'"}}\n',
        INVALID,
        8,
    ),
    (frame(id=9, method="no/such/method"), NOT_FOUND, 9),
    (frame(id=10, method="_fail"), INTERNAL, 10),
    (b"[]\n", INVALID, None),
    (b"42\n", INVALID, None),
]


async def test_malformed_input_gets_the_jsonrpc_errors_and_the_agent_survives(
    tmp_path: Path,
) -> None:
    async with agent(tmp_path) as peer:
        for data, code, reply_id in HOSTILE:
            await peer.send(data)
            reply = await peer.recv()
            assert reply["error"]["code"] == code, (data[:80], reply)
            assert reply["id"] == reply_id, (data[:80], reply)
            assert "data" not in reply["error"] or code != INTERNAL
            await peer.assert_alive()
        # duplicate ids in flight: the second is refused (null id), the first still answered
        slow = frame(id="dup", method="_slow", params={"delay": 0.3})
        await peer.send(slow + slow)
        first = await peer.recv()
        assert first["id"] is None and first["error"]["code"] == INVALID
        assert await peer.recv() == {"jsonrpc": "2.0", "id": "dup", "result": {"slept": 0.3}}
        assert peer.peak_over_baseline() < MEMORY_BOUND


async def test_floods_keep_memory_bounded_and_stderr_unread(tmp_path: Path) -> None:
    async with agent(tmp_path) as peer:
        for round_ in range(4):
            flood = b"".join(
                b'{"jsonrpc":"2.0","id":%d,"result":"nobody asked"}\n' % i
                + b'{"jsonrpc":"2.0","id":%d,"error":{"code":1,"message":"e"}}\n' % i
                + b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}\n' % i
                + b"garbage %d\n" % i
                for i in range(round_ * 25_000, (round_ + 1) * 25_000)
            )
            peer.stdin.write(flood)
            # answers to the garbage (-32700) come back: read them while sending
            reader = asyncio.ensure_future(_read_n(peer, 25_000))
            await peer.stdin.drain()
            codes = await asyncio.wait_for(reader, 60)
            assert codes == {PARSE}
        await peer.assert_alive()
        assert peer.peak_over_baseline() < MEMORY_BOUND


async def _read_n(peer: Agent, count: int) -> set[int]:
    codes = set()
    for _ in range(count):
        line = await peer.stdout.readline()
        codes.add(json.loads(line)["error"]["code"])
    return codes


async def test_notifications_are_neither_lost_nor_reordered_even_at_eof(tmp_path: Path) -> None:
    async with agent(tmp_path) as peer:
        notes = b"".join(
            b'{"jsonrpc":"2.0","method":"_note","params":{"seq":%d}}\n' % i for i in range(20_000)
        )
        await peer.send(notes + frame(id="count", method="_count"))
        assert (await peer.recv())["result"] == {"count": 20_000, "ordered": True}
        # a prompt still running when the peer half-closes is finished and answered
        prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
        await peer.send(frame(id="p", method="session/prompt", params=prompt))
        peer.stdin.close()
        messages = [await peer.recv() for _ in range(9)]
        chunks = [m["params"]["update"]["content"]["text"] for m in messages[:8]]
        assert chunks == [str(i) for i in range(8)]
        assert messages[8] == {"jsonrpc": "2.0", "id": "p", "result": {"messageId": "m_user"}}
        status, peak = await peer.exit_status_and_peak()
        assert status == 0 and peak < MEMORY_BOUND


async def test_a_peer_that_stops_reading_is_dropped_with_bounded_memory(tmp_path: Path) -> None:
    # Memory is bounded by the answers of max_inflight_requests handlers (reading pauses while
    # answers wait for the peer, which is cut when it drains under min_drain_rate per window):
    # here 16 x 200 kB (each held a few times over while it is encoded).
    async with agent(tmp_path, STALL="1", MAX_OUTPUT=str(8 << 20), INFLIGHT="16") as peer:
        big = b"".join(
            frame(id=i, method="_big", params={"size": 200_000}) for i in range(400)
        )  # 80 MB of answers, none read
        try:
            peer.stdin.write(big)
            await asyncio.wait_for(peer.stdin.drain(), TIMEOUT)
        except (ConnectionError, TimeoutError):
            pass  # the agent stopped reading us, then hung up: expected either way
        status, peak = await peer.exit_status_and_peak()
        assert status == 0 and peak < MEMORY_BOUND


async def test_a_peer_that_vanishes_mid_request(tmp_path: Path) -> None:
    async with agent(tmp_path) as peer:
        await peer.send(frame(id=1, method="_slow", params={"delay": 30}))
        await asyncio.sleep(0.2)
        peer.stdin.close()
        peer.stdout.feed_eof()
        transport = peer.process._transport  # type: ignore[attr-defined]
        transport.get_pipe_transport(1).close()  # our end of its stdout: EPIPE for the agent
        # within shutdown_timeout (5 s) the slow request is cancelled and the agent exits
        assert await asyncio.wait_for(peer.process.wait(), TIMEOUT) == 0


async def test_after_epipe_no_further_request_runs(tmp_path: Path) -> None:
    async with agent(tmp_path) as peer:
        transport = peer.process._transport  # type: ignore[attr-defined]
        transport.get_pipe_transport(1).close()  # we stop listening: the agent gets EPIPE
        await asyncio.sleep(0.3)
        for i in range(50):
            await peer.send(frame(id=i, method="_after", params={}))
        await asyncio.sleep(0.5)
        peer.stdin.close()
        assert await asyncio.wait_for(peer.process.wait(), TIMEOUT) == 0
        ran = peer.log.read_text().split()
        assert "_after" not in ran, ran  # requests nobody can read the answer of never run


@pytest.mark.parametrize("size", [1 << 20])
async def test_oversized_line_at_the_limit_boundary(tmp_path: Path, size: int) -> None:
    async with agent(tmp_path, MAX_LINE=str(size)) as peer:
        body = b'{"jsonrpc":"2.0","id":"b","method":"_echo","params":{"t":"'
        tail = b'"}}'
        fits = body + b"x" * (size - len(body) - len(tail)) + tail
        await peer.send(fits + b"\n")
        assert (await peer.recv())["id"] == "b"
        await peer.send(fits[:-3] + b'x"}}\n')
        reply = await peer.recv()
        assert reply["error"]["code"] == INVALID and str(size) in reply["error"]["message"]
        await peer.assert_alive()
