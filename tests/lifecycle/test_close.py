"""Close (issue 31, requirement 2): when the agent's connection is closed (`Connection.close()`,
what a server's shutdown does) during a turn, the turn is cancelled at once and still ends with
its `idle` (v2) or answer (v1) before the output closes. An agent and a `PromptingClient` in one
process, over two OS pipes."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from typing import Any

import pytest
from acp_runtime.lifecycle import PromptingClient, Turn, TurnAgent
from test_agent_turns import PACKAGES
from wire_peer import GENERATED


async def pipe() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_close_cancels_the_turn_and_reports_its_end_first(version: int) -> None:
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    acp: Any = importlib.import_module(PACKAGES[version])
    started = asyncio.Event()

    class Agent(TurnAgent, acp.Agent):  # type: ignore[misc]
        async def respond(self, turn: Turn) -> None:
            await turn.say("working")
            started.set()
            await asyncio.sleep(3600)

    class Client(PromptingClient, acp.Client):  # type: ignore[misc]
        pass

    (agent_in, client_out), (client_in, agent_out) = await pipe(), await pipe()
    agent, client = Agent(), Client()
    server = acp.Connection(agent, agent.inbound_methods, agent_in, agent_out)
    agent.attach(server)
    connection = acp.Connection(client, client.inbound_methods, client_in, client_out)
    peer = client.attach(connection)
    async with server, connection:
        info = acp.Implementation(name="t", version="0")
        if version == 1:
            await peer.initialize(acp.InitializeRequest(protocol_version=1, client_info=info))
            session_id = (
                await peer.session_new(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
            ).session_id
        else:
            await peer.initialize(2, info)
            session_id = (await peer.session_new("/")).session_id
        turn = client.prompt(session_id, "hello")
        await asyncio.wait_for(started.wait(), 20)
        await asyncio.wait_for(server.close(), 20)
        result = await asyncio.wait_for(turn, 20)
        assert (result.stop_reason, result.text) == ("cancelled", "working")
