"""The runtime over a real subprocess's stdio (spawn / connect_stdio / serve_stdio)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from rpc_peers import RawPeer, rpc
from rpc_testkit import (
    HERE,
    TIMEOUT,
    EchoClient,
    EchoParams,
    EchoResult,
    SlowParams,
    client_table,
)

SERVER = str(HERE / "rpc_testkit.py")


@pytest.fixture
def child_env() -> dict[str, str]:
    """Environment for a child stdio server (it imports the installed runtime)."""
    return dict(os.environ)


async def _raw_child(env: dict[str, str]) -> tuple[asyncio.subprocess.Process, RawPeer]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        limit=1 << 20,
    )
    assert process.stdin is not None and process.stdout is not None
    return process, RawPeer(process.stdout, process.stdin)


async def test_spawn_request_response_and_callbacks(child_env: dict[str, str]) -> None:
    connection, process = await rpc.spawn(
        [sys.executable, SERVER], EchoClient(), client_table(rpc), env=child_env
    )
    async with connection:
        assert await connection.request("echo", EchoParams(text="hi"), EchoResult) == EchoResult(
            text="hi"
        )
        # the child calls back into us while serving the request
        result = await connection.request("ask_back", {"text": "stdio"}, EchoResult)
        assert result.text == "client said oidts"
        results = await asyncio.gather(
            connection.request("slow", SlowParams(delay=0.2, text="a"), EchoResult),
            connection.request("echo", EchoParams(text="b"), EchoResult),
        )
        assert [r.text for r in results] == ["a", "b"]
        with pytest.raises(rpc.RpcError) as info:
            await connection.request("nope", {}, None)
        assert info.value.code == rpc.METHOD_NOT_FOUND and info.value.data == {"method": "nope"}
        # cancellation crosses the process boundary and the child stays usable
        call = asyncio.create_task(connection.request("slow", {"delay": 30}, EchoResult))
        await asyncio.sleep(0.1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await connection.request("count", None, int) == 1
    # closing our end is EOF for the child, which exits cleanly
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_child_answers_bad_frames_and_bounds_memory(child_env: dict[str, str]) -> None:
    process, raw = await _raw_child(child_env)
    try:
        await raw.send(b"\xde\xad\xbe\xef not json\n")
        assert (await raw.recv())["error"]["code"] == rpc.PARSE_ERROR
        await raw.assert_alive()
        await raw.send(b'{"jsonrpc":"2.0","method":7,"id":3}\n')
        reply = await raw.recv()
        assert reply["id"] == 3 and reply["error"]["code"] == rpc.INVALID_REQUEST
        # 60 MB line against the child's 1 MB limit
        await raw.send(b'{"jsonrpc":"2.0","id":"big","method":"echo","params":{"text":"')
        block = b"q" * (1 << 20)
        for _ in range(60):
            await raw.send(block)
        await raw.send(b'"}}\n')
        reply = await raw.recv(timeout=30)
        assert reply["id"] == "big" and reply["error"]["code"] == rpc.INVALID_REQUEST
        await raw.assert_alive()
        status = Path(f"/proc/{process.pid}/status")
        if status.exists():
            peak_kb = next(
                int(line.split()[1])
                for line in status.read_text().splitlines()
                if line.startswith("VmHWM:")
            )
            assert peak_kb < 200 * 1024, f"child peak RSS {peak_kb} kB"
        await raw.send_json({"jsonrpc": "2.0", "id": 9, "method": "slow", "params": {"delay": 30}})
        await raw.send_json(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 9}}
        )
        reply = await raw.recv()
        assert reply["id"] == 9 and reply["error"]["code"] == rpc.REQUEST_CANCELLED
    finally:
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_serve_stdio(child_env: dict[str, str]) -> None:
    process, raw = await _raw_child({**child_env, "RPC_SERVE_STDIO": "1"})
    await raw.assert_alive()
    assert process.stdin is not None
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def test_stdio_on_regular_files(child_env: dict[str, str], tmp_path: Path) -> None:
    """stdin/stdout redirected to files fall back to blocking file I/O."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"garbage\n[]\n" + json.dumps({"jsonrpc": "2.0", "id": 1}).encode())
    sink = tmp_path / "out.jsonl"
    with source.open("rb") as stdin, sink.open("wb") as stdout:
        process = await asyncio.create_subprocess_exec(
            sys.executable, SERVER, stdin=stdin, stdout=stdout, env=child_env
        )
        assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    replies: list[Any] = [json.loads(line) for line in sink.read_bytes().splitlines()]
    assert [(r["id"], r["error"]["code"]) for r in replies] == [
        (None, rpc.PARSE_ERROR),
        (None, rpc.INVALID_REQUEST),
        (1, rpc.INVALID_REQUEST),
    ]


def test_spawn_and_serve_on_uvloop(child_env: dict[str, str]) -> None:
    # serve_remote and the conductor run on uvloop when it is installed (the `remote-fast`
    # extra): its pipe transports are not asyncio's classes, and must be taken as they are
    uvloop = pytest.importorskip("uvloop")

    async def exchange() -> None:
        connection, process = await rpc.spawn(
            [sys.executable, SERVER], EchoClient(), client_table(rpc), env=child_env
        )
        async with connection:
            echoed = await connection.request("echo", EchoParams(text="uv"), EchoResult)
            assert echoed == EchoResult(text="uv")
        assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(asyncio.wait_for(exchange(), TIMEOUT))
