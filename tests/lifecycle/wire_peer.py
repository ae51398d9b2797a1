"""A raw JSON-RPC client over a real pipe to an agent process, for checking the wire exactly:
it records every message the agent sends, in order, and answers permission requests with a
policy the test sets."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GENERATED = HERE.parents[1] / "generated"
WAIT = 20.0  # a bound on waits that succeed at once when the code works


class WirePeer:
    """One agent process and everything it sent."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []
        self.next_id = 0
        self.arrived = asyncio.Event()
        self.permission: str | None = "allow"  # option to pick; None: do not answer
        self.permission_requests: list[dict[str, Any]] = []
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(
        cls, package: str, *, turn_timeout: float = 10.0, history_db: str | None = None
    ) -> WirePeer:
        env = {**os.environ, "PYTHONPATH": str(GENERATED), "TURN_TIMEOUT": str(turn_timeout)}
        if history_db is not None:  # the agent keeps its sessions in this SQLite file
            env["HISTORY_DB"] = history_db
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "lifecycle_agent.py"),
            package,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            message = json.loads(line)
            self.seen.append(message)
            self.arrived.set()
            if message.get("method") == "session/request_permission":
                self.permission_requests.append(message)
                if self.permission is not None:
                    await self.answer_permission(message["id"], self.permission)

    async def answer_permission(self, request_id: Any, option: str) -> None:
        outcome = (
            {"outcome": "cancelled"}
            if option == "cancelled"
            else {"outcome": "selected", "optionId": option}
        )
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}})

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def wait_for(self, predicate: Any, after: int = 0) -> int:
        """The index of the first message from `after` on that satisfies `predicate`."""
        async with asyncio.timeout(WAIT):
            while True:
                for index in range(after, len(self.seen)):
                    if predicate(self.seen[index]):
                        return index
                self.arrived.clear()
                await self.arrived.wait()

    async def answer(self, request_id: int) -> dict[str, Any]:
        index = await self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)
        return self.seen[index]

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.answer(await self.request(method, params))

    async def open_session(self, version: int) -> str:
        info = {"name": "wire-peer", "version": "1.0"}
        params = {"protocolVersion": version, "clientCapabilities": {}, "clientInfo": info}
        if version >= 2:
            params = {"protocolVersion": version, "info": info, "capabilities": {}}
        init = await self.call("initialize", params)
        assert init.get("result", {}).get("protocolVersion") == version, init
        new = await self.call(
            "session/new", {"cwd": "/tmp", "mcpServers": []} if version == 1 else {"cwd": "/tmp"}
        )
        return str(new["result"]["sessionId"])

    def updates(self, start: int = 0, end: int | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.seen[start:end]
            if m.get("method") == "session/update"
        ]

    async def close(self) -> tuple[int, bytes]:
        """Close stdin and wait for the process: its exit status and stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        if not self.process.stdin.is_closing():
            self.process.stdin.close()
        async with asyncio.timeout(WAIT):
            stderr = await self.process.stderr.read()
            status = await self.process.wait()
            await self.reader
        return status, stderr

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        self.reader.cancel()


def prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
