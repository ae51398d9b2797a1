"""Session history and resume over a new connection (issue 31, requirements 4 and 6): a v2
`TurnAgent` served over WebSocket and Streamable HTTP by our ASGI app under a real uvicorn; a
client prompts, hangs up, reconnects, resumes with `replayFrom: start` and gets each entity once,
materialized, with its original ids (a compaction as one completed entry, no live notice), then
its next prompt is answered on the new connection."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from acp_runtime.lifecycle import PromptingClient, Turn, TurnAgent
from wire_peer import GENERATED

pytest.importorskip("uvicorn")
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp
from acp_runtime import remote

STEP = 20.0  # a bound on steps that succeed at once when the code works


class Agent(TurnAgent, acp.Agent):  # type: ignore[misc]
    async def respond(self, turn: Turn) -> None:
        for word in turn.text.split():
            await turn.say(word + " ")
        await turn.updates.notice("info", "live only")
        await turn.updates.compaction_update("cmp_1", "in_progress")
        await turn.updates.compaction_summary_chunk("kept ", "cmp_1")
        await turn.updates.compaction_summary_chunk("context", "cmp_1")
        await turn.updates.compaction_update("cmp_1", "completed")


class Client(PromptingClient, acp.Client):  # type: ignore[misc]
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def on_unknown_update(self, params: Any, update: Any) -> None:
        raise AssertionError(update)

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update.to_dict())
        await super().session_update(params)


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    import uvicorn

    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", ws="websockets-sansio", lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    async with asyncio.timeout(STEP):
        while not server.started:
            assert not task.done(), "uvicorn did not start"
            await asyncio.sleep(0.01)
    try:
        yield f"127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, STEP)


async def connect(url: str) -> tuple[Client, Any, Any]:
    client = Client()
    peer, connection = await remote.connect_url(url, client)
    await connection.__aenter__()
    await asyncio.wait_for(peer.initialize(2, acp.Implementation(name="t", version="0")), STEP)
    return client, peer, connection


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_resume_over_a_new_connection_replays_then_prompts_are_answered(scheme: str) -> None:
    app = remote.acp_asgi_app(
        Agent()
    )  # one handler, shallow-copied per connection: shared sessions
    async with serving(app) as base:
        url = f"{scheme}://{base}/acp"
        first, peer, connection = await connect(url)
        session_id = (await asyncio.wait_for(peer.session_new("/tmp"), STEP)).session_id
        live = await asyncio.wait_for(first.prompt(session_id, "remember this"), STEP)
        assert (live.stop_reason, live.text) == ("end_turn", "remember this ")
        await connection.close()
        async with asyncio.timeout(STEP):  # the server lets go of the session
            while app.registry.connections:
                await asyncio.sleep(0.02)

        second, peer, connection = await connect(url)
        try:
            start = acp.ReplayFromStart_()
            await asyncio.wait_for(peer.session_resume(session_id, "/tmp", replay_from=start), STEP)
            replayed = list(second.updates)
            reply_id = next(
                u["messageId"] for u in first.updates if u["sessionUpdate"] == "agent_message_chunk"
            )
            assert replayed == [
                {
                    "sessionUpdate": "user_message",
                    "messageId": live.message_id,
                    "content": [{"type": "text", "text": "remember this"}],
                },
                {
                    "sessionUpdate": "agent_message",
                    "messageId": reply_id,
                    "content": [
                        {"type": "text", "text": "remember "},
                        {"type": "text", "text": "this "},
                    ],
                },
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "cmp_1",
                    "status": "completed",
                    "summary": [
                        {"type": "text", "text": "kept "},
                        {"type": "text", "text": "context"},
                    ],
                },
                {"sessionUpdate": "state_update", "state": "idle"},
            ]
            assert any(u["sessionUpdate"] == "notice" for u in first.updates)  # live, not replayed
            again = await asyncio.wait_for(second.prompt(session_id, "welcome back"), STEP)
            assert (again.stop_reason, again.text) == ("end_turn", "welcome back ")
        finally:
            await connection.close()
