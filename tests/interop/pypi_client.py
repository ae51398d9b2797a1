"""An ACP v1 client built on the PyPI `agent-client-protocol` SDK (public API only) that drives an
agent command over its stdio and prints one JSON record of what it observed.

usage: python pypi_client.py AGENT_COMMAND [ARGS...]
       python pypi_client.py --url ws://HOST:PORT/acp|http://HOST:PORT/acp [--step SECONDS]

`--url` connects over the SDK's remote transports instead of spawning the agent (the `http`
extra: `create_websocket_stream`, or `create_http_stream` whose HTTP exchanges are recorded under
"http": each request's verb, HTTP version and status, and for a POST its JSON-RPC method, or
"response", and whether it carried `Acp-Session-Id`). `--step` bounds each request (default 20 s).

The same three prompts as v1_client.mjs: a permission request answered `allow` (end_turn); 200
slow words cancelled after the third chunk (cancelled); a permission request during which the
client sends session/cancel and answers `cancelled`, as v1 requires (cancelled).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from acp import PROTOCOL_VERSION, RequestPermissionResponse, spawn_agent_process
from acp.schema import AllowedOutcome, ClientCapabilities, DeniedOutcome, Implementation

STEP = 20.0  # a guard against a hang per request; `--step` changes it


def text_block(text: str) -> Any:
    """A text content block (the 0.x helper of that name is gone in 1.0: one script for both)."""
    from acp.schema import TextContentBlock

    return TextContentBlock(type="text", text=text)


class RecordingClient:
    """Records updates and permission requests; answers them as the scenario says."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.permission_mode = "allow"
        self.on_chunk: Any = None
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.events.append(
            {
                "kind": "permission",
                "toolCallId": tool_call.tool_call_id,
                "options": [o.option_id for o in options],
            }
        )
        if self.permission_mode == "allow":  # the option called allow, else the first offered
            chosen = next(
                (o.option_id for o in options if o.option_id == "allow"), options[0].option_id
            )
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=chosen)
            )
        self.events.append({"kind": "cancel_sent"})
        await self.conn.cancel(session_id=session_id)
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        event = {"kind": "update", "sessionUpdate": data.get("sessionUpdate")}
        if "status" in data:
            event["status"] = data["status"]
        if data.get("sessionUpdate") == "agent_message_chunk":
            event["text"] = data["content"].get("text")
        self.events.append(event)
        if data.get("sessionUpdate") == "agent_message_chunk" and self.on_chunk is not None:
            self.on_chunk(session_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def scenario(command: list[str], record: dict[str, Any]) -> None:
    client = RecordingClient()
    record["events"] = client.events
    if command[0] == "--url":
        from acp import connect_to_agent

        transport = await remote_transport(command[1], record)
        conn = connect_to_agent(client, transport)
        try:
            await lifecycle(client, conn, record)
        finally:
            await asyncio.wait_for(conn.close(), STEP)
        return
    async with spawn_agent_process(client, command[0], *command[1:], env=dict(os.environ)) as (
        conn,
        _process,
    ):
        await lifecycle(client, conn, record)


async def remote_transport(url: str, record: dict[str, Any]) -> Any:
    """The SDK's WebSocket or Streamable HTTP transport to `url`; HTTP exchanges recorded."""
    if url.startswith("ws"):
        from acp.ws import create_websocket_stream

        return await create_websocket_stream(url)
    import httpx2
    from acp.http import create_http_stream

    exchanges: list[dict[str, Any]] = []
    record["http"] = exchanges

    async def on_response(response: Any) -> None:
        request = response.request
        entry: dict[str, Any] = {
            "verb": request.method,
            "status": response.status_code,
            "httpVersion": response.http_version,
        }
        if request.method == "POST":
            body = json.loads(request.content)
            entry["message"] = body.get("method", "response")
            entry["sessionHeader"] = "acp-session-id" in request.headers
        exchanges.append(entry)

    # what create_http_stream makes when given no client (HTTP/2 allowed, no read timeout), plus
    # the hook that records each exchange
    http = httpx2.AsyncClient(
        http2=True, timeout=httpx2.Timeout(None), event_hooks={"response": [on_response]}
    )
    return create_http_stream(url, client=http)


async def lifecycle(client: RecordingClient, conn: Any, record: dict[str, Any]) -> None:
    """initialize, session/new and the three prompts."""
    client.conn = conn
    init = await asyncio.wait_for(
        conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pypi-interop-client", version="1.0.0"),
        ),
        STEP,
    )
    record["initialize"] = init.model_dump(by_alias=True, exclude_none=True, mode="json")
    session = await asyncio.wait_for(conn.new_session(cwd=os.getcwd(), mcp_servers=[]), STEP)
    record["sessionId"] = session.session_id

    async def prompt(text: str) -> None:
        client.events.append({"kind": "prompt_sent"})
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block(text)]), STEP
        )
        record["prompts"].append({"text": text[:40], "stopReason": response.stop_reason})
        client.events.append({"kind": "prompt_done", "stopReason": response.stop_reason})

    await prompt("ask permission then echo")
    chunks = 0
    cancels: list[asyncio.Task[None]] = []

    def after_three(session_id: str) -> None:
        nonlocal chunks
        chunks += 1
        if chunks == 3:
            client.on_chunk = None
            client.events.append({"kind": "cancel_sent"})
            cancels.append(asyncio.ensure_future(conn.cancel(session_id=session_id)))

    client.on_chunk = after_three
    await prompt(" ".join(["slow"] * 200))
    client.permission_mode = "cancel"
    await prompt("permission, then cancel")


def main() -> None:
    global STEP
    record: dict[str, Any] = {"ok": False, "error": None, "prompts": [], "events": []}
    argv = sys.argv[1:]
    if argv[-2:-1] == ["--step"]:
        STEP, argv = float(argv[-1]), argv[:-2]
    try:
        asyncio.run(scenario(argv, record))
        record["ok"] = True
    except Exception as exc:  # noqa: BLE001 - the record says what went wrong
        record["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(record))


if __name__ == "__main__":
    main()
