"""SessionState, ID-addressed entities: tool calls, terminals, plans, compactions, subagents and
session-directed messages, one test per rule of the prompt-lifecycle spec (public API only)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

import acp_v2_draft as acp


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_text(value: str) -> dict[str, Any]:
    """Tool-call content wrapping a text block."""
    return {"type": "content", "content": text(value)}


def applied(*updates: dict[str, Any]) -> acp.SessionState:
    """A fresh state with these updates applied in order."""
    state = acp.SessionState()
    for update in updates:
        state.apply_data(update)
    return state


def tool_texts(call: acp.TimelineToolCall | None) -> list[str]:
    assert call is not None
    return [item.to_dict()["content"]["text"] for item in call.content]


def summary(state: acp.SessionState, compaction_id: str = "cmp_001") -> list[str]:
    compaction = state.compaction(compaction_id)
    assert compaction is not None
    return [block.to_dict()["text"] for block in compaction.summary]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- tool calls --------------------------------------------------------------------------------


def test_a_new_tool_call_starts_pending_and_other_and_fields_patch() -> None:
    state = applied(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_001",
            "title": "Analyzing Python code",
        }
    )
    call = state.tool_call("call_001")
    assert call is not None
    assert (call.title, call.kind, call.status, call.content) == (
        "Analyzing Python code",
        "other",
        "pending",
        [],
    )
    state.apply_data(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_001",
            "status": "in_progress",
            "kind": "read",
        }
    )
    assert (call.title, call.kind, call.status) == ("Analyzing Python code", "read", "in_progress")
    state.apply_data(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_001",
            "title": None,
            "kind": None,
            "status": None,
        }
    )
    assert (call.title, call.kind, call.status) == (
        None,
        "other",
        "pending",
    )  # null unsets / resets


def test_tool_content_chunks_append_and_an_update_with_content_replaces() -> None:
    state = applied(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_text("Checked syntax..."),
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_text("Checked types..."),
        },
    )
    assert tool_texts(state.tool_call("c")) == ["Checked syntax...", "Checked types..."]
    state.apply_data(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}
    )
    assert tool_texts(state.tool_call("c")) == [
        "Checked syntax...",
        "Checked types...",
    ]  # omitted: kept
    state.apply_data(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "content": [tool_text("Analysis complete")],
        }
    )
    assert tool_texts(state.tool_call("c")) == ["Analysis complete"]
    state.apply_data(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_text("more"),
        }
    )
    assert tool_texts(state.tool_call("c")) == ["Analysis complete", "more"]


@pytest.mark.parametrize("cleared", [None, []], ids=["null", "empty"])
def test_tool_content_null_and_empty_clear(cleared: Any) -> None:
    state = applied(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": tool_text("x")},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": cleared},
    )
    assert tool_texts(state.tool_call("c")) == []


def test_tool_meta_patches_by_key() -> None:
    state = applied(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta": {"a": 1, "b": 2}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta": {"b": None, "c": 3}},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_text("x"),
            "_meta": {"d": 4},
        },
    )
    call = state.tool_call("c")
    assert call is not None and call.meta == {"a": 1, "c": 3}


# -- terminals ---------------------------------------------------------------------------------


def test_terminal_output_chunks_append_bytes_and_a_snapshot_replaces_them() -> None:
    state = applied(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"hello ")},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"world")},
    )
    terminal = state.terminal("t1")
    assert (
        terminal is not None
        and bytes(terminal.output) == b"hello world"
        and terminal.command == "make"
    )
    state.apply_data(
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "output": {"data": b64(b"snapshot")},
        }
    )
    assert bytes(terminal.output) == b"snapshot"
    state.apply_data(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"+")}
    )
    state.apply_data(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}}
    )
    assert bytes(terminal.output) == b"snapshot+" and terminal.exit_status is not None
    state.apply_data(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "output": None, "command": None}
    )
    assert bytes(terminal.output) == b""
    assert terminal.command is None


# -- plans -------------------------------------------------------------------------------------


def plan(plan_id: str, *entries: str) -> dict[str, Any]:
    items = [{"content": e, "priority": "medium", "status": "pending"} for e in entries]
    return {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": plan_id, "entries": items},
    }


def test_plan_updates_upsert_by_id_in_place_and_removal_takes_the_plan_out() -> None:
    state = applied(
        plan("p1", "a", "b"),
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("x")},
        plan("p1", "c"),
    )
    first = state.plan("p1")
    assert first is not None and [e["content"] for e in first.content.to_dict()["entries"]] == ["c"]
    assert state.timeline[0] is first  # position of the first update
    state.apply_data({"sessionUpdate": "plan_removed", "planId": "p1"})
    assert state.plan("p1") is None and len(state.timeline) == 1
    state.apply_data(plan("p1", "again"))
    assert state.timeline[-1] is state.plan("p1")  # a new plan, placed when it reappears


# -- compactions -------------------------------------------------------------------------------


def compaction(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "compaction_update",
        "compactionId": "cmp_001",
        "status": status,
        **fields,
    }


def chunk(value: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "cmp_001",
        "content": text(value),
    }


def test_a_streamed_summary_is_replaced_by_the_terminal_summary() -> None:
    state = applied(compaction("in_progress"), chunk("## Retained context\n\n"), chunk("partial"))
    assert summary(state) == ["## Retained context\n\n", "partial"]
    state.apply_data(
        compaction(
            "completed",
            summary=[text("## Retained context\n\nThe user is updating the ACP schema.")],
        )
    )
    assert summary(state) == ["## Retained context\n\nThe user is updating the ACP schema."]
    compacted = state.compaction("cmp_001")
    assert compacted is not None and compacted.status == "completed"


def test_a_completed_update_without_summary_keeps_the_streamed_content() -> None:
    state = applied(compaction("in_progress"), chunk("a"), chunk("b"), compaction("completed"))
    assert summary(state) == ["a", "b"]


@pytest.mark.parametrize("cleared", [None, []], ids=["null", "empty"])
def test_summary_null_and_empty_clear_partial_output(cleared: Any) -> None:
    state = applied(
        compaction("in_progress"),
        chunk("partial"),
        compaction("failed", summary=cleared, error="boom"),
    )
    compacted = state.compaction("cmp_001")
    assert compacted is not None and (summary(state), compacted.error) == ([], "boom")
    state.apply_data(compaction("failed", error=None))
    assert compacted.error is None


def test_a_compaction_keeps_its_first_timeline_position() -> None:
    state = applied(
        {"sessionUpdate": "agent_message_chunk", "messageId": "before", "content": text("x")},
        compaction("in_progress"),
        {"sessionUpdate": "agent_message_chunk", "messageId": "after", "content": text("y")},
        chunk("s"),
        compaction("completed", _meta={"k": 1}),
    )
    order = [
        getattr(e, "message_id", None) or getattr(e, "compaction_id", None) for e in state.timeline
    ]
    assert order == ["before", "cmp_001", "after"]
    compacted = state.compaction("cmp_001")
    assert compacted is not None and compacted.meta == {"k": 1}


def test_a_first_seen_terminal_compaction_starts_without_patch_values() -> None:
    state = applied(compaction("completed", summary=[text("replayed")], error=None))
    compacted = state.compaction("cmp_001")
    assert compacted is not None and (summary(state), compacted.error, compacted.meta) == (
        ["replayed"],
        None,
        None,
    )


# -- subagents and session-directed messages --------------------------------------------------------


def test_subagent_updates_patch_the_child_and_replace_its_state_snapshot() -> None:
    state = applied(
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child",
            "title": "Researcher",
            "state": {"state": "running"},
        },
        {"sessionUpdate": "subagent_update", "sessionId": "child", "description": "Reads docs"},
    )
    child = state.subagent("child")
    assert child is not None and (child.title, child.description) == ("Researcher", "Reads docs")
    assert child.state is not None and child.state.state == "running"
    state.apply_data(
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child",
            "state": {"state": "idle", "stopReason": "end_turn"},
        }
    )
    assert child.state is not None and child.state.to_dict() == {
        "state": "idle",
        "stopReason": "end_turn",
    }
    state.apply_data(
        {"sessionUpdate": "subagent_update", "sessionId": "child", "state": None, "title": None}
    )
    assert child.state is None
    assert (child.title, child.description) == (None, "Reads docs")
    assert state.timeline == [child]


def test_session_message_participants_survive_omission_and_null() -> None:
    state = applied(
        {
            "sessionUpdate": "session_message_chunk",
            "messageId": "received_message_1",
            "senderSessionId": "parent_session",
            "recipientSessionId": "child_session",
            "content": text("Please investigate "),
        },
        {
            "sessionUpdate": "session_message_chunk",
            "messageId": "received_message_1",
            "content": text("the bug"),
        },
    )
    message = state.session_message("received_message_1")
    assert message is not None
    assert (message.sender_session_id, message.recipient_session_id) == (
        "parent_session",
        "child_session",
    )
    assert [b.to_dict()["text"] for b in message.content] == ["Please investigate ", "the bug"]
    state.apply_data(
        {
            "sessionUpdate": "session_message",
            "messageId": "received_message_1",
            "senderSessionId": None,
            "senderMessageId": "out_1",
        }
    )
    assert (message.sender_session_id, message.sender_message_id) == ("parent_session", "out_1")


def test_session_message_upsert_replaces_or_clears_content_and_adds_identities() -> None:
    state = applied(
        {"sessionUpdate": "session_message", "messageId": "out_1", "content": [text("hi")]},
        {"sessionUpdate": "session_message", "messageId": "out_1", "recipientSessionId": "child"},
    )
    message = state.session_message("out_1")
    assert message is not None and message.recipient_session_id == "child"
    assert [b.to_dict()["text"] for b in message.content] == ["hi"]
    state.apply_data({"sessionUpdate": "session_message", "messageId": "out_1", "content": []})
    assert message.content == []
    state.apply_data(
        {"sessionUpdate": "session_message", "messageId": "out_1", "senderMessageId": "x"}
    )
    state.apply_data(
        {"sessionUpdate": "session_message", "messageId": "out_1", "senderMessageId": None}
    )
    assert message.sender_message_id is None  # a message ID (not a participant) clears on null
