"""Lenient when received through the runtime, strict when built: malformed values at leniency
sites arrive over a real OS pipe (the runtime's inbound path, not `from_dict`), the handler sees
the repaired value with unknown fields, variants and enum values kept, and the same value built
in Python raises a `ValidationError` naming the field."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp_v2_draft as acp
import pytest
from bindings_support import HERE, PYTHON, python_env
from pydantic import ValidationError

AGENTS = str(HERE / "probe_agents.py")

# session/prompt params: `_meta` (default-on-error) is not an object, the text block's
# annotations hold an out-of-range `priority` (default-on-error), an `audience` with one invalid
# item (skip-invalid-items) and one unknown role; the second block is an unknown variant.
PROMPT = {
    "sessionId": "s1",
    "_meta": 5,
    "x-vendor": {"k": [1, 2]},
    "prompt": [
        {
            "type": "text",
            "text": "hi",
            "annotations": {"priority": 9, "audience": ["user", 7, "future_role"]},
        },
        {"type": "future_block", "data": {"n": 1}},
    ],
}


async def _ask_raw(process: asyncio.subprocess.Process, message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    await process.stdin.drain()
    line = await asyncio.wait_for(process.stdout.readline(), 30)
    return json.loads(line)  # type: ignore[no-any-return]


async def test_an_agent_handler_sees_repaired_values_received_over_a_pipe() -> None:
    process = await asyncio.create_subprocess_exec(
        PYTHON,
        AGENTS,
        "lenient",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=python_env(),
    )
    try:
        answer = await _ask_raw(
            process, {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT}
        )
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
    assert "error" not in answer, answer  # a repaired value is no error
    seen = answer["result"]["_meta"]
    assert seen["meta"] == [None, False]  # the malformed `_meta` was dropped
    assert seen["extra"] == {"x-vendor": {"k": [1, 2]}}  # unknown field kept
    assert seen["blocks"] == ["ContentBlockText", "UnknownContentBlock"]  # unknown variant kept
    assert seen["unknown_raw"] == {"type": "future_block", "data": {"n": 1}}
    assert seen["priority"] is None  # out of range: dropped
    assert seen["audience"] == [
        ["user", True, False],
        ["future_role", False, False],
    ]  # 7 skipped, unknown kept
    assert seen["wire"] == {
        "sessionId": "s1",
        "x-vendor": {"k": [1, 2]},
        "prompt": [
            {"type": "text", "text": "hi", "annotations": {"audience": ["user", "future_role"]}},
            {"type": "future_block", "data": {"n": 1}},
        ],
    }


def test_the_same_values_built_in_python_raise_naming_the_field() -> None:
    text = acp.ContentBlockText(text="hi")
    with pytest.raises(ValidationError) as caught:
        acp.PromptRequest(session_id="s1", prompt=[text], meta=5)  # type: ignore[arg-type]
    assert caught.value.errors()[0]["loc"] == ("meta",)
    with pytest.raises(ValidationError) as caught:
        acp.Annotations(priority=9)
    assert caught.value.errors()[0]["loc"][0] == "priority"
    with pytest.raises(ValidationError) as caught:
        acp.Annotations(audience=["user", 7])  # type: ignore[list-item]
    assert caught.value.errors()[0]["loc"][:2] == ("audience", 1)
    with pytest.raises(ValidationError) as caught:
        acp.Annotations(audience=["future_role"])  # reserved: not the program's to emit
    assert caught.value.errors()[0]["loc"][0] == "audience"
    with pytest.raises(ValidationError) as caught:
        acp.ToolCallUpdate(tool_call_id="t1", status=7)  # type: ignore[arg-type]
    assert caught.value.errors()[0]["loc"] == ("status",)
    with pytest.raises(ValidationError) as caught:
        acp.ToolCallUpdate(tool_call_id="t1", locations=[acp.ToolCallLocation(path="/a"), {"line": 1}])  # type: ignore[list-item]
    assert caught.value.errors()[0]["loc"][:2] == ("locations", 1)


class Recorder(acp.Client):
    def __init__(self) -> None:
        self.tool_calls: list[
            tuple[acp.UpdateSessionNotification, acp.SessionUpdateToolCallUpdate]
        ] = []
        self.unknown: list[acp.UnknownSessionUpdate] = []

    async def on_tool_call_update(
        self, params: acp.UpdateSessionNotification, update: acp.SessionUpdateToolCallUpdate
    ) -> None:
        self.tool_calls.append((params, update))

    async def on_unknown_update(
        self, params: acp.UpdateSessionNotification, update: acp.UnknownSessionUpdate
    ) -> None:
        self.unknown.append(update)


async def test_a_client_handler_sees_repaired_session_updates_received_over_a_pipe() -> None:
    client = Recorder()
    async with acp.spawn_agent(PYTHON, AGENTS, "raw", client=client, env=python_env()) as agent:
        result = await agent.initialize(
            protocol_version=2, info=acp.Implementation(name="t", version="1")
        )
        assert result.info.name == "raw"
        # the ordering guarantee: both notifications were handled before the answer arrived
        assert len(client.tool_calls) == 1 and len(client.unknown) == 1
    params, update = client.tool_calls[0]
    assert params.meta is None and params.__pydantic_extra__ == {"x-top": True}
    assert update.tool_call_id == "t1"
    assert update.status is None and update.title is None  # malformed: dropped
    assert (
        update.kind is not None and update.kind == "future_kind" and update.kind.is_reserved
    )  # kept
    assert [loc.to_dict() for loc in update.locations or ()] == [{"path": "/a"}, {"path": "/b"}]
    assert update.__pydantic_extra__ == {"x-vendor": {"k": 1}}
    assert params.to_dict() == {
        "sessionId": "s1",
        "x-top": True,
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "kind": "future_kind",
            "locations": [{"path": "/a"}, {"path": "/b"}],
            "x-vendor": {"k": 1},
        },
    }
    assert client.unknown[0].to_dict() == {"sessionUpdate": "future_update", "foo": [1, 2]}
