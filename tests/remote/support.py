"""Test support for the remote transport: a generated-package echo agent, a recording client,
our ASGI app under a real uvicorn on 127.0.0.1, and the node scripts' paths.

The agent follows the v2 draft's prompt lifecycle like tests/interop/v2_agent.mjs (the TS one),
so both servers answer the same client code the same way:

  session/prompt -> user_message -> response {messageId} -> state running
  -> if "permission" in the text: requires_action, session/request_permission, running,
     agent_message_chunk m_perm "selected:OPTION" (or the outcome's name, or "error:CODE")
  -> one agent_message_chunk m_echo per word (10 ms apart with "slow")
  -> state idle end_turn (cancelled after session/cancel).
  "flood N" sends N chunks of 1 KiB as fast as the transport takes them (limits tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REMOTE_DIR = Path(__file__).resolve().parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v2_draft as acp
from acp_runtime import remote

STEP_TIMEOUT = 20.0


class EchoAgent(acp.Agent):
    """The lifecycle above; sessions live in `store`, shared by the per-connection copies."""

    def __init__(self) -> None:
        self.store: dict[str, list[str]] = {}  # session id -> prompts, shared across copies
        self.ids = itertools.count(1)
        self.work: dict[str, asyncio.Task[None]] = {}
        self.flood_failed: list[BaseException] = []

    def __copy__(self) -> EchoAgent:
        clone = type(self)()
        clone.store, clone.ids, clone.flood_failed = self.store, self.ids, self.flood_failed
        return clone

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse.from_dict(
            {
                "protocolVersion": params.protocol_version,
                "info": {"name": "py-echo-agent", "version": "1.0"},
                "capabilities": {"session": {"resume": {}}},
            }
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"sess_py_{next(self.ids)}"
        self.store[session_id] = []
        return acp.NewSessionResponse.from_dict({"sessionId": session_id})

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        if params.session_id not in self.store:
            raise acp.RpcError(-32602, "Unknown session", {"sessionId": params.session_id})
        await self._send(params.session_id, {"sessionUpdate": "state_update", "state": "idle"})
        return acp.ResumeSessionResponse.from_dict({})

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = params.session_id
        if session not in self.store:
            raise acp.RpcError(-32602, "Unknown session", {"sessionId": session})
        text = " ".join(block.to_dict().get("text", "") for block in params.prompt)
        self.store[session].append(text)
        message_id = f"msg_py_{next(self.ids)}"
        content = [block.to_dict() for block in params.prompt]
        await self._send(
            session, {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
        )
        self.work[session] = asyncio.get_running_loop().create_task(self._work(session, text))
        return acp.PromptResponse(message_id=message_id)

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        task = self.work.pop(params.session_id, None)
        if task is not None:
            task.cancel()

    async def _send(self, session: str, update: dict[str, Any]) -> None:
        await self.peer.session_update(
            acp.UpdateSessionNotification.from_dict({"sessionId": session, "update": update})
        )

    async def _work(self, session: str, text: str) -> None:
        try:
            await self._send(session, {"sessionUpdate": "state_update", "state": "running"})
            if text.startswith("flood "):
                await self._flood(session, int(text.split()[1]))
                return
            if "permission" in text:
                await self._ask(session)
            for word in text.split():
                await self._send(session, _chunk("m_echo", word))
                if "slow" in text:
                    await asyncio.sleep(0.01)
            await self._send(
                session,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            )
        except asyncio.CancelledError:
            with contextlib.suppress(ConnectionError):
                await self._send(
                    session,
                    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
                )
        except ConnectionError:
            pass

    async def _ask(self, session: str) -> None:
        await self._send(session, {"sessionUpdate": "state_update", "state": "requires_action"})
        try:
            answer = await self.peer.session_request_permission(
                acp.RequestPermissionRequest.from_dict(
                    {
                        "sessionId": session,
                        "title": "Run the pretend tool?",
                        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_1"}},
                        "options": [
                            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                        ],
                    }
                )
            )
            outcome = answer.outcome.to_dict()
            chosen = (
                f"selected:{outcome['optionId']}"
                if outcome["outcome"] == "selected"
                else outcome["outcome"]
            )
        except acp.RpcError as exc:
            chosen = f"error:{exc.code}"
        await self._send(session, {"sessionUpdate": "state_update", "state": "running"})
        await self._send(session, _chunk("m_perm", chosen))

    async def _flood(self, session: str, count: int) -> None:
        word = "x" * 1024
        try:
            for _ in range(count):
                await self._send(session, _chunk("m_flood", word))
        except ConnectionError as exc:
            self.flood_failed.append(exc)
            raise


def _chunk(message_id: str, text: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": message_id,
        "content": {"type": "text", "text": text},
    }


class RecordingClient(acp.Client):
    """Records every session's lifecycle; answers permission with `allow` (or waits, if told)."""

    def __init__(self, *, undecided: bool = False) -> None:
        self.events: dict[str, list[tuple[Any, ...]]] = {}
        self.undecided = undecided
        self._changed = asyncio.Event()
        self.on_chunk: Callable[[str], None] | None = None

    def _add(self, session: str, event: tuple[Any, ...]) -> None:
        self.events.setdefault(session, []).append(event)
        self._changed.set()

    async def wait_for(self, what: str, predicate: Callable[[], bool]) -> None:
        """Wait (bounded) until `predicate()` holds."""

        async def wait() -> None:
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

        try:
            await asyncio.wait_for(wait(), STEP_TIMEOUT)
        except TimeoutError:
            pytest.fail(f"timed out waiting for {what}; events: {self.events}")

    def idle(self, session: str) -> bool:
        """Whether the session's last prompt ended."""
        return any(
            e[0] == "state" and e[1] == "idle" and e[2] for e in self.events.get(session, [])
        )

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        self._add(params.session_id, ("permission", params.title))
        if self.undecided:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self._add(params.session_id, ("permission_withdrawn",))
                raise
        return acp.RequestPermissionResponse.from_dict(
            {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )

    async def on_user_message(self, params: Any, update: Any) -> None:
        self._add(params.session_id, ("user_message", update.message_id))

    async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
        self._add(params.session_id, ("chunk", update.message_id, update.content.text))
        if self.on_chunk is not None:
            self.on_chunk(params.session_id)

    async def on_state_update(self, params: Any, update: Any) -> None:
        self._add(params.session_id, ("state", update.state, getattr(update, "stop_reason", None)))

    async def on_unknown_update(self, params: Any, update: Any) -> None:
        self._add(params.session_id, ("unknown", update.raw))


def init_request() -> acp.InitializeRequest:
    """The client's initialize."""
    return acp.InitializeRequest.from_dict(
        {"protocolVersion": 2, "info": {"name": "acp-codegen", "version": "1.0"}}
    )


def new_session() -> acp.NewSessionRequest:
    """A session/new in this repository."""
    return acp.NewSessionRequest.from_dict({"cwd": str(ROOT), "mcpServers": []})


def prompt(session_id: str, text: str) -> acp.PromptRequest:
    """A one-text-block prompt."""
    return acp.PromptRequest.from_dict(
        {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )


@contextlib.asynccontextmanager
async def uvicorn_server(app: Any, **options: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (a free port); yields the base URL.

    `options` go to `uvicorn.Config` (e.g. `ssl_certfile`, `ssl_keyfile`). WebSockets run on the
    protocol `serve_remote` gives uvicorn (`remote.uvicorn_ws`)."""
    import uvicorn
    from acp_runtime.remote.uvicorn_ws import websocket_protocol

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        **{"ws": websocket_protocol(), **options},
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(500):
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    if not server.started:
        task.cancel()
        pytest.fail("uvicorn did not start")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)


__all__ = ["REMOTE_DIR", "acp", "remote"]
