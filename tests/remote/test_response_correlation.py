"""A client's response POST without `Acp-Session-Id` (issue 33: the PyPI SDK 1.0.0rc3 omits it on
permission answers, and the turn hung on our 400): refused with a body that says what is missing
and how a server may accept it, by default as the RFD requires; taken by its JSON-RPC id when the
app is made with `correlate_responses_by_id=True`, and the turn then goes on. Raw HTTP (httpx and
its SSE reader) against our app on a real uvicorn, so the headers are exactly what the test sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from tests.remote.support import STEP_TIMEOUT, EchoAgent, remote, uvicorn_server

JSON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class RawClient:
    """One ACP connection spoken in raw HTTP: POSTs, and the messages of one SSE stream."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.connection_id = ""
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.streams: list[asyncio.Task[None]] = []

    async def post(self, message: dict[str, Any], session: str | None = None) -> httpx.Response:
        headers = (
            {**JSON, "acp-connection-id": self.connection_id} if self.connection_id else dict(JSON)
        )
        if session is not None:
            headers["acp-session-id"] = session
        return await self.http.post(self.url, content=json.dumps(message), headers=headers)

    def listen(self, session: str | None = None) -> None:
        headers = {"accept": "text/event-stream", "acp-connection-id": self.connection_id}
        if session is not None:
            headers["acp-session-id"] = session

        async def read() -> None:
            async with aconnect_sse(self.http, "GET", self.url, headers=headers) as source:
                async for event in source.aiter_sse():
                    if event.data:
                        await self.inbox.put(json.loads(event.data))

        self.streams.append(asyncio.get_running_loop().create_task(read()))

    async def until(self, what: str, match: Any) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                message = await self.inbox.get()
                if match(message):
                    return message

        try:
            return await asyncio.wait_for(wait(), STEP_TIMEOUT)
        except TimeoutError:
            pytest.fail(f"timed out waiting for {what}")


@contextlib.asynccontextmanager
async def permission_pending(
    **options: Any,
) -> AsyncIterator[tuple[RawClient, dict[str, Any], str]]:
    """A connection whose agent waits for the answer to its session/request_permission."""
    app = remote.acp_asgi_app(EchoAgent(), **options)
    async with uvicorn_server(app) as base, httpx.AsyncClient(timeout=STEP_TIMEOUT) as http:
        client = RawClient(http, f"http://{base}/acp")
        init = await client.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}},
            }
        )
        assert init.status_code == 200, init.text
        client.connection_id = init.headers["acp-connection-id"]
        client.listen()
        created = await client.post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        )
        assert created.status_code == 202
        session = (await client.until("session/new's answer", lambda m: m.get("id") == 1))[
            "result"
        ]["sessionId"]
        client.listen(session)
        prompt = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {
                "sessionId": session,
                "prompt": [{"type": "text", "text": "permission please"}],
            },
        }
        assert (await client.post(prompt, session)).status_code == 202
        asked = await client.until(
            "the permission request", lambda m: m.get("method") == "session/request_permission"
        )
        try:
            yield client, asked, session
        finally:
            for stream in client.streams:
                stream.cancel()
            await asyncio.gather(*client.streams, return_exceptions=True)


def answer(asked: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }


async def test_a_response_without_the_session_header_is_refused_by_default_with_a_clear_body() -> (
    None
):
    async with permission_pending() as (client, asked, session):
        refused = await client.post(answer(asked))
        assert refused.status_code == 400
        assert (
            "Missing Acp-Session-Id" in refused.text and repr(session) in refused.text
        ), refused.text
        assert "correlate_responses_by_id=True" in refused.text, refused.text
        # the refusal keeps the request pending: the same answer with the header goes through
        assert (await client.post(answer(asked), session)).status_code == 202
        chunk = await client.until(
            "the chunk after the answer",
            lambda m: m.get("method") == "session/update"
            and m["params"]["update"].get("messageId") == "m_perm",
        )
        assert chunk["params"]["update"]["content"]["text"] == "selected:allow"


async def test_a_wrong_session_header_is_refused_even_when_correlating_by_id() -> None:
    async with permission_pending(correlate_responses_by_id=True) as (client, asked, _session):
        refused = await client.post(answer(asked), "sess_someone_else")
        assert (
            refused.status_code == 400 and "Mismatched Acp-Session-Id" in refused.text
        ), refused.text


async def test_with_correlation_by_id_the_answer_is_taken_and_the_turn_goes_on() -> None:
    async with permission_pending(correlate_responses_by_id=True) as (client, asked, _session):
        assert (await client.post(answer(asked))).status_code == 202
        chunk = await client.until(
            "the chunk after the answer",
            lambda m: m.get("method") == "session/update"
            and m["params"]["update"].get("messageId") == "m_perm",
        )
        assert chunk["params"]["update"]["content"]["text"] == "selected:allow"
        await client.until(
            "the end of the turn",
            lambda m: m.get("method") == "session/update"
            and m["params"]["update"].get("stopReason") == "end_turn",
        )
