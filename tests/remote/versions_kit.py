"""Remote test kit for the released packages: an `acp_v1` and an `acp_v2` streaming agent, a
client of each recording the chunks it receives, and one prompt lifecycle driven through the same
package's `remote.connect_url`.

v1's turn: the agent streams one `agent_message_chunk` per word, then answers the prompt with
`stopReason: end_turn`. v2's turn: the prompt is answered at once with its `messageId`, then the
agent reports `running`, one chunk per word (under that message id) and `idle` (`end_turn`).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from tests.remote.support import ROOT, STEP_TIMEOUT  # puts generated/ on sys.path

# isort: split
import acp_v1
import acp_v2
from acp_runtime import remote

WORDS = ["hello", "remote", "world"]
INITIALIZE: dict[Any, dict[str, Any]] = {
    acp_v1: {"protocolVersion": 1, "clientCapabilities": {}},
    acp_v2: {"protocolVersion": 2, "info": {"name": "remote-test", "version": "1"}},
}


class V1Agent(acp_v1.Agent):
    """v1: chunks first, then the prompt's answer."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse.from_dict(
            {"protocolVersion": 1, "agentInfo": {"name": "v1-remote", "version": "1"}}
        )

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id=f"sess_v1_{next(self.ids)}")

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        session = self.peer.session(params.session_id)
        for word in " ".join(b.to_dict().get("text", "") for b in params.prompt).split():
            await session.agent_message_chunk(word)
        return acp_v1.PromptResponse.from_dict({"stopReason": "end_turn"})


class V2Agent(acp_v2.Agent):
    """v2: the answer (a message id) first, then state and chunks."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.work: set[asyncio.Task[None]] = set()

    async def initialize(self, params: acp_v2.InitializeRequest) -> acp_v2.InitializeResponse:
        return acp_v2.InitializeResponse.from_dict(
            {"protocolVersion": 2, "info": {"name": "v2-remote", "version": "2"}}
        )

    async def session_new(self, params: acp_v2.NewSessionRequest) -> acp_v2.NewSessionResponse:
        return acp_v2.NewSessionResponse(session_id=f"sess_v2_{next(self.ids)}")

    async def session_prompt(self, params: acp_v2.PromptRequest) -> acp_v2.PromptResponse:
        message_id = f"msg_v2_{next(self.ids)}"
        text = " ".join(b.to_dict().get("text", "") for b in params.prompt)
        task = asyncio.get_running_loop().create_task(
            self._stream(params.session_id, message_id, text.split())
        )
        self.work.add(task)
        task.add_done_callback(self.work.discard)
        return acp_v2.PromptResponse(message_id=message_id)

    async def _stream(self, session_id: str, message_id: str, words: list[str]) -> None:
        session = self.peer.session(session_id)
        await session.state_update_running()
        for word in words:
            await session.agent_message_chunk(word, message_id)
        await session.state_update_idle_end_turn()


class _Recorder:
    def __init__(self) -> None:
        self.chunks: dict[str, list[str]] = {}
        self.idle: set[str] = set()
        self.changed = asyncio.Event()

    def chunk(self, session_id: str, text: str) -> None:
        self.chunks.setdefault(session_id, []).append(text)
        self.changed.set()

    async def wait(self, session_id: str, *, idle: bool) -> list[str]:
        """The session's chunks once all words (and, if asked, the idle state) arrived."""

        async def done() -> None:
            while len(self.chunks.get(session_id, [])) < len(WORDS) or (
                idle and session_id not in self.idle
            ):
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(done(), STEP_TIMEOUT)
        except TimeoutError:
            pytest.fail(f"session {session_id} did not finish: {self.chunks}, idle {self.idle}")
        return self.chunks[session_id]


class V1Client(acp_v1.Client, _Recorder):
    """Records v1 chunks."""

    def __init__(self) -> None:
        _Recorder.__init__(self)

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self.chunk(params.session_id, update.content.text)


class V2Client(acp_v2.Client, _Recorder):
    """Records v2 chunks (with their message id) and the end of the turn."""

    def __init__(self) -> None:
        _Recorder.__init__(self)

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self.chunk(params.session_id, f"{update.message_id}:{update.content.text}")

    async def on_state_update(self, params: Any, update: Any) -> None:
        if update.state == "idle" and getattr(update, "stop_reason", None) == "end_turn":
            self.idle.add(params.session_id)
            self.changed.set()


@dataclass(frozen=True)
class Turn:
    """What a client saw of one initialize, session/new and prompt."""

    initialized: Any
    session_id: str
    answer: Any
    chunks: list[str]


async def prompt_turn(package: Any, url: str, **options: Any) -> Turn:
    """Connect `package`'s client to `url`, initialize, open a session and prompt it."""
    client: V1Client | V2Client = V1Client() if package is acp_v1 else V2Client()
    peer, connection = await remote.connect_url(url, client, **options)
    async with connection:
        initialized = await asyncio.wait_for(
            peer.initialize(package.InitializeRequest.from_dict(INITIALIZE[package])),
            STEP_TIMEOUT,
        )
        new = package.NewSessionRequest.from_dict({"cwd": str(ROOT), "mcpServers": []})
        session_id = (await asyncio.wait_for(peer.session_new(new), STEP_TIMEOUT)).session_id
        request = package.PromptRequest.from_dict(
            {"sessionId": session_id, "prompt": [{"type": "text", "text": " ".join(WORDS)}]}
        )
        answer = await asyncio.wait_for(peer.session_prompt(request), STEP_TIMEOUT)
        chunks = await client.wait(session_id, idle=package is acp_v2)
    return Turn(initialized, session_id, answer, chunks)


def expect_turn(package: Any, turn: Turn) -> None:
    """Assert `turn` is `package`'s own lifecycle, served by that version's agent."""
    if package is acp_v1:
        assert turn.initialized.protocol_version == 1
        assert turn.initialized.agent_info.name == "v1-remote"
        assert turn.session_id.startswith("sess_v1_")
        assert turn.answer.stop_reason == "end_turn"
        assert turn.chunks == WORDS
    else:
        assert turn.initialized.protocol_version == 2
        assert turn.initialized.info.name == "v2-remote"
        assert turn.session_id.startswith("sess_v2_")
        assert turn.chunks == [f"{turn.answer.message_id}:{word}" for word in WORDS]
