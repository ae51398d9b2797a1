"""SessionState, messages and session-level records: one test per rule of the prompt-lifecycle spec.

Everything goes through the generated package's public API (`acp_v2_draft.SessionState`), fed
wire-shaped dicts the way a client receives them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

import acp_v2_draft as acp


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def command(name: str) -> dict[str, Any]:
    """An advertised slash command."""
    return {"type": "command", "name": name, "description": f"/{name}"}


def texts(blocks: list[Any]) -> list[str]:
    """The text of each block of stored content."""
    return [block.text for block in blocks]


def applied(*updates: dict[str, Any]) -> acp.SessionState:
    """A fresh state with these updates applied in order."""
    state = acp.SessionState()
    for update in updates:
        state.apply_data(update)
    return state


def agent_text(state: acp.SessionState, message_id: str = "m1") -> list[str]:
    message = state.message("agent_message", message_id)
    assert message is not None
    return texts(message.content)


def test_message_update_then_chunk_appends_and_a_later_update_replaces() -> None:
    # "agent_message with content: [A], then agent_message_chunk with B renders [A, B]; another
    # agent_message with content: [C] renders [C]. Subsequent chunks append to [C]."
    state = applied(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("B")},
    )
    assert agent_text(state) == ["A", "B"]
    state.apply_data({"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("C")]})
    assert agent_text(state) == ["C"]
    state.apply_data(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("D")}
    )
    assert agent_text(state) == ["C", "D"]


def test_a_message_update_without_content_leaves_it_unchanged() -> None:
    state = applied(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]},
        {"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"k": 1}},
    )
    assert agent_text(state) == ["A"]


@pytest.mark.parametrize("cleared", [None, []], ids=["null", "empty"])
def test_content_null_and_empty_clear_the_message(cleared: Any) -> None:
    state = applied(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("B")},
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": cleared},
    )
    assert agent_text(state) == []
    state.apply_data(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("E")}
    )
    assert agent_text(state) == ["E"]


def test_chunks_alone_create_the_message_and_a_new_id_is_a_new_message() -> None:
    state = applied(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("a")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m2", "content": text("x")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("b")},
    )
    assert agent_text(state, "m1") == ["a", "b"]
    assert agent_text(state, "m2") == ["x"]
    assert [e.message_id for e in state.timeline if isinstance(e, acp.TimelineMessage)] == [
        "m1",
        "m2",
    ]


def test_user_agent_and_thought_messages_are_separate_roles_in_timeline_order() -> None:
    state = applied(
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [text("question")]},
        {"sessionUpdate": "agent_thought", "messageId": "t1", "content": [text("hmm")]},
        {"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": text(" more")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("answer")},
        {"sessionUpdate": "user_message_chunk", "messageId": "u1", "content": text(" too")},
    )
    assert [
        (e.role, texts(e.content)) for e in state.timeline if isinstance(e, acp.TimelineMessage)
    ] == [
        ("user_message", ["question", " too"]),
        ("agent_thought", ["hmm", " more"]),
        ("agent_message", ["answer"]),
    ]
    assert state.message("agent_message", "u1") is None


def test_message_meta_patches_by_top_level_key_and_chunk_meta_is_chunk_scoped() -> None:
    state = applied(
        {"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"a": 1, "b": {"x": 1}}},
        {"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"b": {"y": 2}, "c": 3}},
    )
    message = state.message("agent_message", "m1")
    assert message is not None
    assert message.meta == {"a": 1, "b": {"y": 2}, "c": 3}  # replaced per key, nested not merged
    state.apply_data({"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"a": None}})
    assert message.meta == {"b": {"y": 2}, "c": 3}
    state.apply_data(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": text("x"),
            "_meta": {"z": 1},
        }
    )
    state.apply_data({"sessionUpdate": "agent_message", "messageId": "m1"})
    assert message.meta == {"b": {"y": 2}, "c": 3}
    state.apply_data({"sessionUpdate": "agent_message", "messageId": "m1", "_meta": None})
    assert message.meta is None


def test_a_chunk_patches_in_place_without_copying_the_message() -> None:
    state = applied({"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]})
    message = state.message("agent_message", "m1")
    assert message is not None
    content = message.content
    for i in range(50):
        state.apply_data(
            {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text(str(i))}
        )
    assert state.message("agent_message", "m1") is message and message.content is content
    assert len(content) == 51 and len(state.timeline) == 1


def test_notices_are_live_only_and_never_in_the_timeline() -> None:
    state = applied(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]},
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "MCP server unavailable",
            "description": "Continuing without it.",
        },
        {"sessionUpdate": "notice", "severity": "_custom", "title": "again"},
    )
    assert [n.title for n in state.notices] == ["MCP server unavailable", "again"]
    assert len(state.timeline) == 1 and isinstance(state.timeline[0], acp.TimelineMessage)


def test_unknown_updates_are_kept_raw_in_timeline_order() -> None:
    vendor = {"sessionUpdate": "_vendor_ping", "n": 1, "nested": {"keep": [1, 2]}}
    future = {"sessionUpdate": "future_thing", "x": None}
    state = applied(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("a")},
        vendor,
        {"sessionUpdate": "agent_message_chunk", "messageId": "m2", "content": text("b")},
        future,
    )
    kinds = [type(e).__name__ for e in state.timeline]
    assert kinds == ["TimelineMessage", "TimelineRaw", "TimelineMessage", "TimelineRaw"]
    raws = [e.raw for e in state.timeline if isinstance(e, acp.TimelineRaw)]
    assert raws == [vendor, future]


def test_state_machine_running_requires_action_idle_and_unknown() -> None:
    state = acp.SessionState()
    assert (state.state, state.stop_reason) == ("idle", None)  # a new session defaults to idle
    state.apply_data({"sessionUpdate": "state_update", "state": "running"})
    assert state.state == "running"
    state.apply_data({"sessionUpdate": "state_update", "state": "requires_action"})
    assert state.state == "requires_action"
    state.apply_data({"sessionUpdate": "state_update", "state": "unknown"})
    assert (state.state, state.last_known_state) == ("unknown", "requires_action")
    state.apply_data({"sessionUpdate": "state_update", "state": "running"})  # replaces unknown
    assert (state.state, state.last_known_state) == ("running", "running")
    state.apply_data({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    assert (state.state, state.stop_reason, state.last_known_state) == ("idle", "end_turn", "idle")
    assert state.state_update is not None and state.state_update.state == "idle"
    state.apply_data(
        {"sessionUpdate": "state_update", "state": "idle"}
    )  # a snapshot without a reason
    assert (state.state, state.stop_reason) == ("idle", None)
    state.apply_data(
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "_vendor_stop"}
    )
    assert state.stop_reason == "_vendor_stop"


def test_an_unrecognized_state_is_not_idle_and_does_not_confirm_the_previous_one() -> None:
    state = applied(
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "state_update", "state": "_paused"},
    )
    assert (state.state, state.last_known_state) == ("_paused", "running")
    assert state.timeline == []


def test_usage_update_replaces_counts_and_patches_cost() -> None:
    state = applied(
        {
            "sessionUpdate": "usage_update",
            "used": 53000,
            "size": 200000,
            "cost": {"amount": 0.045, "currency": "USD"},
        },
        {"sessionUpdate": "usage_update", "used": 54000, "size": 200000},
    )
    assert state.usage is not None
    assert (state.usage.used, state.usage.size) == (54000, 200000)
    assert state.usage.cost is not None and state.usage.cost.amount == 0.045  # omitted: unchanged
    state.apply_data({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": None})
    assert state.usage.cost is None


def test_session_info_fields_patch_and_null_clears() -> None:
    state = applied(
        {
            "sessionUpdate": "session_info_update",
            "title": "First",
            "updatedAt": "2026-01-01T00:00:00Z",
        },
        {"sessionUpdate": "session_info_update", "title": "Second"},
    )
    assert (state.info.title, state.info.updated_at) == ("Second", "2026-01-01T00:00:00Z")
    state.apply_data({"sessionUpdate": "session_info_update", "updatedAt": None})
    assert (state.info.title, state.info.updated_at) == ("Second", None)


def test_available_commands_and_config_options_are_replaced_whole() -> None:
    state = applied(
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [command("web"), command("test")],
        },
        {"sessionUpdate": "available_commands_update", "availableCommands": [command("plan")]},
    )
    assert state.available_commands is not None
    assert [c.to_dict()["name"] for c in state.available_commands] == ["plan"]
    assert state.config_options is None
    state.apply_data({"sessionUpdate": "config_option_update", "configOptions": []})
    assert state.config_options == []


def test_every_variant_of_the_revision_has_a_handler() -> None:
    from acp_v2_draft import session

    assert set(session._HANDLERS) == set(acp.SessionUpdateTag.known_values())


def test_the_stable_package_has_a_reducer_and_v1_has_none() -> None:
    import acp_v1
    import acp_v2

    state = acp_v2.SessionState()
    state.apply_data({"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("A")]})
    state.apply_data(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("B")}
    )
    message = state.message("agent_message", "m1")
    assert message is not None and texts(message.content) == ["A", "B"]
    assert not hasattr(acp_v1, "SessionState")
    assert not (Path(acp_v1.__file__).parent / "session.py").exists()
