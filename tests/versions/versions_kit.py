"""Test kit for protocol versions: agents and clients of acp_v1 and acp_v2_draft over OS pipes.

The agents answer `initialize` with their own version and report the params they received in
`_meta.received`, so a test sees what the router handed on. `Peer` is the raw JSON-RPC side of a
test: it writes lines and reads the answers the router (or the agent behind it) sends.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

GENERATED = Path(__file__).resolve().parents[2] / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v1
import acp_v2_draft as acp_v2

READ_TIMEOUT = 10.0


class V1Agent(acp_v1.Agent):
    """Answers initialize in v1 and creates sessions."""

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse.from_dict(
            {
                "protocolVersion": 1,
                "agentInfo": {"name": "v1-agent", "version": "1"},
                "_meta": {"received": params.to_dict()},
            }
        )

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id="v1-session")


class V2Agent(acp_v2.Agent):
    """Answers initialize in v2 and creates sessions."""

    async def initialize(self, params: acp_v2.InitializeRequest) -> acp_v2.InitializeResponse:
        return acp_v2.InitializeResponse.from_dict(
            {
                "protocolVersion": 2,
                "info": {"name": "v2-agent", "version": "2"},
                "_meta": {"received": params.to_dict()},
            }
        )

    async def session_new(self, params: acp_v2.NewSessionRequest) -> acp_v2.NewSessionResponse:
        return acp_v2.NewSessionResponse(session_id="v2-session")


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
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


class Peer:
    """The raw side of a connection: lines out, parsed answers in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def send(self, message: Any) -> None:
        """Write one message (a str is written as is) and a newline."""
        text = message if isinstance(message, str) else json.dumps(message)
        self.writer.write(text.encode() + b"\n")
        await self.writer.drain()

    async def receive(self) -> dict[str, Any]:
        """The next message from the other side."""
        line = await asyncio.wait_for(self.reader.readline(), READ_TIMEOUT)
        assert line, "the other side closed the connection"
        message: dict[str, Any] = json.loads(line)
        return message

    async def call(self, message: Any) -> dict[str, Any]:
        """Send and return the next message."""
        await self.send(message)
        return await self.receive()

    async def nothing_pending(self) -> None:
        """Nothing arrives for a while (a ping to the router proves it reads on)."""
        try:
            line = await asyncio.wait_for(self.reader.readline(), 0.2)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected message: {line!r}")


def initialize(version: Any, request_id: Any = 1, **params: Any) -> dict[str, Any]:
    """An initialize request asking for ``version``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, **params},
    }
