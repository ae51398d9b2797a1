"""Shared helpers for the JSON-RPC runtime tests: a tiny method table, an echo handler and real
pipe transports. A subprocess runs this file as a stdio server (``build_server``).
"""

from __future__ import annotations

import asyncio
import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

HERE = Path(__file__).resolve().parent
TIMEOUT = 20.0  # generous: CI machines and shared 2-core boxes are slow to start children


def load_runtime() -> ModuleType:
    """The runtime's JSON-RPC package (`acp_runtime.jsonrpc`)."""
    return importlib.import_module("acp_runtime.jsonrpc")


# ----------------------------------------------------------------------------- models


class Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class EchoParams(Wire):
    text: str
    shout: bool = False


class EchoResult(Wire):
    text: str


class SlowParams(Wire):
    delay: float
    text: str = ""


class FailParams(Wire):
    kind: str


class NoteParams(Wire):
    session_id: str = Field(alias="sessionId")
    seq: int
    delay: float = 0.0


class AskParams(Wire):
    text: str


class WeirdParams(Wire):
    x: int

    @field_validator("x")
    @classmethod
    def _no_negatives(cls, value: int) -> int:
        if value < 0:
            raise KeyError("a validator bug: not a ValueError")
        return value


# ----------------------------------------------------------------------------- tables


def server_table(rpc: ModuleType) -> dict[str, Any]:
    """Methods the echo server receives."""
    spec = rpc.MethodSpec
    specs = [
        spec("echo", "request", EchoParams, EchoResult, "echo"),
        spec("slow", "request", SlowParams, EchoResult, "slow"),
        spec("fail", "request", FailParams, EchoResult, "fail"),
        spec("missing", "request", EchoParams, EchoResult, "no_such_handler"),
        spec("ask_back", "request", AskParams, EchoResult, "ask_back"),
        spec("count", "request", None, int, "count"),
        spec("weird", "request", WeirdParams, EchoResult, "echo"),
        spec("note", "notification", NoteParams, None, "note"),
        spec("bad_note", "notification", NoteParams, None, "bad_note"),
    ]
    return {s.method: s for s in specs}


def client_table(rpc: ModuleType) -> dict[str, Any]:
    """Methods the client side receives."""
    return {"client/echo": rpc.MethodSpec("client/echo", "request", EchoParams, EchoResult, "echo")}


class EchoServer:
    """Handler for ``server_table``; records what it saw."""

    def __init__(self, rpc: ModuleType) -> None:
        self.rpc = rpc
        self.connection: Any = None
        self.finished: list[str] = []
        self.notes: list[tuple[str, int]] = []
        self.note_events: dict[int, asyncio.Event] = {}
        self.active_notes = 0
        self.max_active_notes = 0
        self.cancelled: list[str] = []
        self.started: list[str] = []
        self.extensions: list[tuple[str, str, Any]] = []
        self.calls = 0

    async def echo(self, params: EchoParams) -> EchoResult:
        text = params.text.upper() if params.shout else params.text
        self.finished.append(params.text)
        return EchoResult(text=text)

    async def slow(self, params: SlowParams) -> EchoResult:
        self.started.append(params.text)
        try:
            await asyncio.sleep(params.delay)
        except asyncio.CancelledError:
            self.cancelled.append(params.text)
            raise
        self.finished.append(params.text)
        return EchoResult(text=params.text)

    async def fail(self, params: FailParams) -> EchoResult:
        if params.kind == "rpc":
            raise self.rpc.RpcError(-32042, "custom failure", {"why": "because"})
        if params.kind == "notimpl":
            raise NotImplementedError
        if params.kind == "unserializable":
            return object()  # type: ignore[return-value]
        raise ValueError("boom")

    async def ask_back(self, params: AskParams) -> EchoResult:
        reply = await self.connection.request(
            "client/echo", EchoParams(text=params.text), EchoResult
        )
        return EchoResult(text=f"client said {reply.text}")

    async def count(self, params: None) -> int:
        assert params is None
        self.calls += 1
        return self.calls

    async def note(self, params: NoteParams) -> None:
        self.active_notes += 1
        self.max_active_notes = max(self.max_active_notes, self.active_notes)
        try:
            if params.delay:
                await asyncio.sleep(params.delay)
            self.notes.append((params.session_id, params.seq))
        finally:
            self.active_notes -= 1
        event = self.note_events.get(len(self.notes))
        if event is not None:
            event.set()

    async def bad_note(self, params: NoteParams) -> None:
        self.notes.append((params.session_id, -1))
        raise RuntimeError("notification handler failure")

    async def extension_request(self, method: str, params: Any) -> Any:
        self.extensions.append(("request", method, params))
        if method == "_ext/unimplemented":
            raise NotImplementedError
        return {"method": method, "params": params}

    async def extension_notification(self, method: str, params: Any) -> None:
        self.extensions.append(("notification", method, params))

    async def wait_notes(self, count: int) -> None:
        """Wait until ``count`` notes were handled."""
        if len(self.notes) >= count:
            return
        event = self.note_events.setdefault(count, asyncio.Event())
        await asyncio.wait_for(event.wait(), TIMEOUT)


class EchoClient:
    """Handler for ``client_table``."""

    async def echo(self, params: EchoParams) -> EchoResult:
        return EchoResult(text=params.text[::-1])


def build_server(rpc: ModuleType) -> tuple[EchoServer, dict[str, Any]]:
    """Handler and inbound table of the echo server."""
    return EchoServer(rpc), server_table(rpc)


# ----------------------------------------------------------------------------- pipes


async def pipe() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A one-way OS pipe as an asyncio (reader, writer) pair."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


if __name__ == "__main__":  # a stdio server
    from acp_runtime import jsonrpc as _rpc

    async def _main() -> None:
        handler, table = build_server(_rpc)
        max_line = int(os.environ.get("RPC_MAX_LINE", str(1 << 20)))
        if os.environ.get("RPC_SERVE_STDIO"):
            await _rpc.serve_stdio(handler, table, max_line_bytes=max_line)
            return
        connection = await _rpc.connect_stdio(handler, table, max_line_bytes=max_line)
        handler.connection = connection
        await connection.run()

    asyncio.run(_main())
