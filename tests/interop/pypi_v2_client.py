"""An ACP v2 client built on the PyPI `agent-client-protocol` SDK's experimental v2 API
(`acp.experimental.v2`, public API only) that drives a remote agent by URL over the SDK's
WebSocket or Streamable HTTP transport, and prints one JSON record of what it observed.

usage: python pypi_v2_client.py ws://HOST:PORT/acp|http://HOST:PORT/acp

Two turns, each ended by the agent's `state_update` idle (v2's prompt response comes at once
with the user message's id): "ask permission then echo", answering the permission request with
the option called allow (end_turn); 200 slow words cancelled by `session/cancel` after the third
chunk (cancelled). Needs the SDK's `http` extra.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from acp.experimental import v2

STEP = 20.0  # a guard against a hang per step, never an assertion about speed


class RecordingClient:
    """Records every update and permission request; allows, and cancels after three chunks."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.idle = asyncio.Event()
        self.cancel_after_three = False
        self.chunks = 0  # agent_message_chunks of this turn
        self.conn: Any = None
        self.cancels: list[asyncio.Task[None]] = []

    async def request_permission(
        self, session_id: str, title: str, options: list[Any], **kwargs: Any
    ) -> Any:
        self.events.append({"kind": "permission", "options": [o.option_id for o in options]})
        chosen = next(
            (o.option_id for o in options if o.kind == "allow_once"), options[0].option_id
        )
        return v2.schema.RequestPermissionResponse.model_validate(
            {"outcome": {"outcome": "selected", "optionId": chosen}}
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        event: dict[str, Any] = {"kind": "update", "sessionUpdate": data.get("sessionUpdate")}
        for key in ("state", "stopReason", "status"):
            if key in data:
                event[key] = data[key]
        if data.get("sessionUpdate") == "agent_message_chunk":
            event["text"] = data["content"].get("text")
        self.events.append(event)
        self.chunks += data.get("sessionUpdate") == "agent_message_chunk"
        if self.cancel_after_three and self.chunks == 3:
            self.cancel_after_three = False
            self.events.append({"kind": "cancel_sent"})
            self.cancels.append(
                asyncio.ensure_future(self.conn.cancel_session(session_id=session_id))
            )
        if data.get("state") == "idle":
            self.idle.set()


async def transport(url: str) -> Any:
    if url.startswith("ws"):
        from acp.ws import create_websocket_stream

        return await create_websocket_stream(url)
    from acp.http import create_http_stream

    return create_http_stream(url)


async def scenario(url: str, record: dict[str, Any]) -> None:
    client = RecordingClient()
    record["events"] = client.events
    conn = v2.connect_to_agent(client, await transport(url))
    client.conn = conn
    try:
        init = await asyncio.wait_for(
            conn.initialize(
                protocol_version=v2.PROTOCOL_VERSION,
                info=v2.schema.Implementation(name="pypi-v2-client", version="1.0.0"),
            ),
            STEP,
        )
        record["initialize"] = init.model_dump(by_alias=True, exclude_none=True, mode="json")
        session = await asyncio.wait_for(conn.new_session(cwd=os.getcwd()), STEP)
        record["sessionId"] = session.session_id

        async def turn(text: str) -> None:
            client.idle.clear()
            client.chunks = 0
            client.events.append({"kind": "prompt_sent"})
            block = v2.schema.TextContentBlock(type="text", text=text)
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[block]), STEP
            )
            client.events.append({"kind": "prompt_answered", "messageId": answer.message_id})
            await asyncio.wait_for(client.idle.wait(), STEP)

        await turn("ask permission then echo")
        client.cancel_after_three = True
        await turn(" ".join(["slow"] * 200))
        record["turns"] = [e.get("stopReason") for e in client.events if e.get("state") == "idle"]
    finally:
        await asyncio.wait_for(conn.close(), STEP)


def main() -> None:
    record: dict[str, Any] = {"ok": False, "error": None, "events": []}
    try:
        asyncio.run(scenario(sys.argv[1], record))
        record["ok"] = True
    except Exception as exc:  # noqa: BLE001 - the record says what went wrong
        record["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(record))


if __name__ == "__main__":
    main()
