"""The client awaits what it asked (issue 31, requirement 3): `await client.prompt(...)` on a
generated `Client` returns when the turn is over, with its stop reason and its messages, while
the update handlers run as updates arrive; the same handle cancels. v1 and v2 agent processes
over real pipes."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from typing import Any

import pytest
from acp_runtime.lifecycle import PromptingClient
from test_agent_turns import PACKAGES
from wire_peer import GENERATED, HERE

ENV = {**os.environ, "PYTHONPATH": str(GENERATED)}


def package(version: int) -> Any:
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(PACKAGES[version])


def make_client(acp: Any) -> Any:
    class Client(PromptingClient, acp.Client):  # type: ignore[misc]
        def __init__(self) -> None:
            self.seen: list[str] = []
            self.chunks_when_idle: int | None = None

        async def on_agent_message_chunk(self, session_id: str, update: Any) -> None:
            self.seen.append(update.content.text)

        async def on_state_update(self, session_id: str, update: Any) -> None:
            self.chunks_when_idle = len(self.seen)

        async def session_request_permission(self, params: Any) -> Any:
            await asyncio.get_running_loop().create_future()  # held until withdrawn

    return Client()


async def open_session(acp: Any, agent: Any, version: int) -> str:
    info = acp.Implementation(name="tests", version="0")
    if version == 1:
        await agent.initialize(acp.InitializeRequest(protocol_version=1, client_info=info))
        new = await agent.session_new(acp.NewSessionRequest(cwd="/tmp", mcp_servers=[]))
    else:
        await agent.initialize(2, info)
        new = await agent.session_new("/tmp")
    return str(new.session_id)


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_prompt_returns_when_the_turn_is_over(version: int) -> None:
    acp = package(version)
    client = make_client(acp)
    script = str(HERE / "lifecycle_agent.py")
    async with acp.spawn_agent(
        sys.executable, script, PACKAGES[version], client=client, env=ENV
    ) as agent:
        sid = await open_session(acp, agent, version)
        results = await asyncio.gather(
            client.prompt(sid, "one two slow"), client.prompt(sid, "three")
        )
    assert [r.stop_reason for r in results] == ["end_turn", "end_turn"]
    assert [r.text for r in results] == ["one two slow ", "three "]
    assert client.seen == ["one ", "two ", "slow ", "three "]  # the handlers ran as it came
    if version == 2:
        first = results[0]
        assert first.message_id is not None and first.message_id != results[1].message_id
        state = first.state
        assert state.message("user_message", first.message_id) is not None
        assert state.stop_reason == "end_turn"
        assert client.chunks_when_idle == 4  # the handlers ran before the results came back


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_the_same_handle_cancels_the_turn(version: int) -> None:
    acp = package(version)
    client = make_client(acp)
    script = str(HERE / "lifecycle_agent.py")
    async with acp.spawn_agent(
        sys.executable, script, PACKAGES[version], client=client, env=ENV
    ) as agent:
        sid = await open_session(acp, agent, version)
        turn = client.prompt(sid, "hang")
        while not client.seen:
            await asyncio.sleep(0.01)
        await turn.cancel()
        result = await asyncio.wait_for(turn, 20)
        assert result.stop_reason == "cancelled" and result.text == "hanging"
        after = await client.prompt(sid, "next")
        assert (after.stop_reason, after.text) == ("end_turn", "next ")


async def test_an_awaited_turn_fails_as_soon_as_the_connection_closes() -> None:
    # the turn waits on the connection's end as on its next update (it polled once a second)
    acp = package(2)
    client = make_client(acp)
    script = str(HERE / "lifecycle_agent.py")
    async with acp.spawn_agent(
        sys.executable, script, PACKAGES[2], client=client, env=ENV
    ) as agent:
        sid = await open_session(acp, agent, 2)
        turn = asyncio.ensure_future(client.prompt(sid, "hang"))
        for _ in range(200):  # until the turn runs (a guard of 10 s, not a measurement)
            if client.chunks_when_idle is not None:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)  # the answer with the message id is in
        assert not turn.done()
        await client.peer.connection.close()
        for _ in range(10):  # a few turns of the event loop, no wall-clock wait
            await asyncio.sleep(0)
        assert turn.done()
        with pytest.raises(ConnectionError, match="before the turn ended"):
            turn.result()
