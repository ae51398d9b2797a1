"""Golden diffs of real schema revisions (shared directory), checked by hand: see golden/README.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from diff_support import GOLDEN, GOLDEN_PAIRS, golden_name, golden_result

from acp_codegen.diff.model import DiffResult
from acp_codegen.diff.render import render_json, render_markdown

_cache: dict[tuple[str, str], DiffResult] = {}


def _result(shared: Path, old_id: str, new_id: str) -> DiffResult:
    if (old_id, new_id) not in _cache:
        _cache[old_id, new_id] = golden_result(shared, old_id, new_id)
    return _cache[old_id, new_id]


def _changes(shared: Path, old_id: str, new_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["rule"], c["path"]): c for c in _result(shared, old_id, new_id).to_json()["changes"]}


@pytest.mark.parametrize(("old_id", "new_id"), GOLDEN_PAIRS, ids=lambda x: str(x))
def test_golden_json(shared_dir: Path, old_id: str, new_id: str) -> None:
    expected = (GOLDEN / f"{golden_name(old_id, new_id)}.json").read_text(encoding="utf-8")
    actual = render_json([_result(shared_dir, old_id, new_id)])
    assert json.loads(actual) == json.loads(expected), "run tests/diff/regen.py and review the diff"
    assert actual == expected


@pytest.mark.parametrize(("old_id", "new_id"), GOLDEN_PAIRS, ids=lambda x: str(x))
def test_golden_markdown(shared_dir: Path, old_id: str, new_id: str) -> None:
    expected = (GOLDEN / f"{golden_name(old_id, new_id)}.md").read_text(encoding="utf-8")
    assert render_markdown([_result(shared_dir, old_id, new_id)]) == expected


def test_hand_checked_git_9ac13511_to_bb2ef8f7(shared_dir: Path) -> None:
    found = _changes(shared_dir, "git-9ac13511", "git-bb2ef8f7")
    patch = found["FIELD_ADDED", "ToolCallUpdate.name"]  # the nullable patch-semantics field
    assert (
        patch["new"] == "string | null" and patch["senders"] == ["agent"] and patch["breaks"] == []
    )
    removed = found["VARIANT_REMOVED", "AuthMethod[env_var]"]  # falls to UnknownAuthMethod
    assert (removed["level"], removed["breaks"]) == ("warning", ["agent"])
    for tag in ("compaction_summary_chunk", "compaction_update", "notice"):
        assert found["VARIANT_ADDED", f"SessionUpdate[{tag}]"]["level"] == "info"
    for path in (
        "elicitation/create",
        "elicitation/complete",
        "AuthMethod[terminal]",
        "TerminalAuthCapabilities",
    ):
        assert ("UNSTABLE_MARK_REMOVED", path) in found
    assert not [c for c in found.values() if c["level"] == "breaking"]


def test_hand_checked_npm_2_2_0_to_2_4_0(shared_dir: Path) -> None:
    found = _changes(shared_dir, "npm-2.2.0", "npm-2.4.0")
    assert ("DEFINITION_ADDED", "BackgroundSubagent") in found
    for wire in (
        "session/archive",
        "session/unarchive",
        "session/status",
        "session/set_title",
        "terminal/cancel",
        "tool_call/cancel",
    ):
        assert ("METHOD_ADDED", wire) in found
    assert found["ENUM_VALUE_ADDED", "ToolCallStatus[paused]"]["breaks"] == []
    assert not [c for c in found.values() if c["level"] != "info"]


def test_hand_checked_git_bb2ef8f7_to_npm_1_8_0(shared_dir: Path) -> None:
    found = _changes(shared_dir, "git-bb2ef8f7", "npm-1.8.0")
    message_id = found["REQUIRED_FIELD_ADDED", "PromptResponse.messageId"]  # the agent sends it
    assert (message_id["level"], message_id["breaks"]) == ("breaking", ["agent"])
    for tag in ("subagent_update", "session_message", "session_message_chunk"):
        assert found["VARIANT_ADDED", f"SessionUpdate[{tag}]"]["breaks"] == []
    assert found["METHOD_REMOVED", "mcp/connect"]["breaks"] == [
        "agent"
    ]  # x-side client: agents call it
