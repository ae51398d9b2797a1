"""The history `session/resume` replays (issue 31, requirement 4), folded update by update into
the default store as the prompt lifecycle page asks: one materialized entry per entity, in the
position of its first update; live-only updates never kept."""

from __future__ import annotations

from acp_runtime.lifecycle import MemoryHistory
from acp_runtime.lifecycle.history import record


async def test_entities_are_materialized_in_first_seen_order() -> None:
    store = MemoryHistory()
    updates = [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Read",
            "status": "pending",
        },  # v1
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}},
        {
            "sessionUpdate": "agent_thought_chunk",
            "messageId": "t1",
            "content": {"type": "text", "text": "hm"},
        },
        {"sessionUpdate": "notice", "severity": "info", "title": "live only"},
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "completed",
            "title": None,
        },
        {"sessionUpdate": "plan_removed", "planId": "p1"},
        {
            "sessionUpdate": "agent_thought",
            "messageId": "t1",
            "content": [{"type": "text", "text": "ok"}],
        },
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"sessionUpdate": "session_info_update", "title": "a"},
        {"sessionUpdate": "session_info_update", "title": "b"},
    ]
    for update in updates:
        await record(store, "s", update)
    assert await store.entries("s") == [
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": None, "status": "completed"},
        {
            "sessionUpdate": "agent_thought",
            "messageId": "t1",
            "content": [{"type": "text", "text": "ok"}],
        },
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"sessionUpdate": "session_info_update", "title": "b"},
    ]
    await store.forget("s")
    assert await store.entries("s") == []
