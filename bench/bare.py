"""Floors for `bench/chain.py`, without the runtime: a bare pass-through proxy process and a pipe
ping-pong between two processes.

- `serve_bare_proxy`: a pass-through proxy on plain asyncio pipes and the standard `json` (ids
  renumbered, one parse and one write per message; no limits, no cancellation): what a proxy
  process costs in Python when it does next to no work.
- `ping_pong`: one byte back and forth over blocking pipes between this process and a child
  running `serve_echo`: the kernel's share of crossing between two processes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import time
from collections.abc import Sequence
from typing import Any


async def serve_bare_proxy() -> None:
    """The floor: a pass-through proxy on bare asyncio pipes (ids renumbered, nothing else)."""
    loop = asyncio.get_running_loop()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb", 0))
    theirs: dict[int, Any] = {}  # our request id -> the id of the request it carries on
    ids = itertools.count(1)
    ended: asyncio.Future[None] = loop.create_future()

    def forward(message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # the answer to one of our requests: to the request it answers
            message["id"] = theirs.pop(message["id"])
            sent = message
        elif method == "proxy/successor":  # from the successor: unwrapped
            sent = {"jsonrpc": "2.0", **message["params"]}
        else:  # to the successor: wrapped
            inner = {"method": method, "params": message.get("params")}
            sent = {"jsonrpc": "2.0", "method": "proxy/successor", "params": inner}
        if method is not None and "id" in message:
            sent["id"] = ours = next(ids)
            theirs[ours] = message["id"]
        out.write(json.dumps(sent, separators=(",", ":")).encode() + b"\n")

    class Lines(asyncio.Protocol):
        buffer = b""

        def data_received(self, data: bytes) -> None:
            *lines, self.buffer = (self.buffer + data).split(b"\n")
            for line in lines:
                forward(json.loads(line))

        def connection_lost(self, exc: Exception | None) -> None:
            ended.set_result(None)

    await loop.connect_read_pipe(Lines, os.fdopen(0, "rb", 0))
    await ended


def serve_echo() -> None:
    """The other end of the pipe ping-pong: every byte read is written back."""
    while data := os.read(0, 1):
        os.write(1, data)


def ping_pong(echo_command: Sequence[str], count: int) -> float:
    """Seconds per round trip of one byte over blocking pipes with `echo_command` (a process
    running `serve_echo`)."""
    with subprocess.Popen(echo_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as echo:
        assert echo.stdin is not None and echo.stdout is not None
        to, back = echo.stdin.fileno(), echo.stdout.fileno()
        os.write(to, b"x")
        os.read(back, 1)  # the child is up
        started = time.perf_counter()
        for _ in range(count):
            os.write(to, b"x")
            os.read(back, 1)
        elapsed = time.perf_counter() - started
        echo.stdin.close()
    return elapsed / count
