"""Writes the transcript fixtures of `tests/session/transcripts/` (run it after changing a case).

Each case is a list of recorded messages; a message wrapped in `bad(...)` is one the checker must
report, with the rule it breaks. The expected findings (`expected.json`) come from these marks,
not from the checker, so the tests compare the checker against intent.

    python tests/session/make_transcripts.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("transcripts")
Line = tuple[dict[str, Any], tuple[str, ...]]


def bad(line: Line, *rules: str) -> Line:
    """Mark a recorded message as breaking these rules."""
    return line[0], line[1] + rules


def req(id: int | str, method: str, params: dict[str, Any], sender: str = "client") -> Line:
    return {
        "from": sender,
        "message": {"jsonrpc": "2.0", "id": id, "method": method, "params": params},
    }, ()


def res(id: int | str, result: Any, sender: str = "agent") -> Line:
    return {"from": sender, "message": {"jsonrpc": "2.0", "id": id, "result": result}}, ()


def err(id: int | str, code: int, message: str) -> Line:
    return {
        "from": "agent",
        "message": {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}},
    }, ()


def note(method: str, params: dict[str, Any], sender: str = "client") -> Line:
    return {"from": sender, "message": {"jsonrpc": "2.0", "method": method, "params": params}}, ()


def upd(update: dict[str, Any], session: str = "s1") -> Line:
    return note("session/update", {"sessionId": session, "update": update}, sender="agent")


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def prompt(id: int, words: str, session: str = "s1") -> Line:
    return req(id, "session/prompt", {"sessionId": session, "prompt": [text(words)]})


def state(value: str, **extra: Any) -> Line:
    return upd({"sessionUpdate": "state_update", "state": value, **extra})


def chunk(message_id: str, words: str, kind: str = "agent_message_chunk") -> Line:
    return upd({"sessionUpdate": kind, "messageId": message_id, "content": text(words)})


def user(message_id: str, words: str) -> Line:
    return upd({"sessionUpdate": "user_message", "messageId": message_id, "content": [text(words)]})


def compaction(status: str, cid: str = "cmp_1", **extra: Any) -> Line:
    return upd(
        {"sessionUpdate": "compaction_update", "compactionId": cid, "status": status, **extra}
    )


def summary_chunk(words: str, cid: str = "cmp_1") -> Line:
    return upd(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": cid, "content": text(words)}
    )


def turn(id: int, message_id: str, *body: Line, stop: str = "end_turn") -> list[Line]:
    """A well-behaved prompt: request, response, user message, running, body, idle."""
    return [
        prompt(id, f"prompt {id}"),
        res(id, {"messageId": message_id}),
        user(message_id, f"prompt {id}"),
        state("running"),
        *body,
        state("idle", stopReason=stop),
    ]


SETUP = [
    req(0, "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}),
    res(
        0,
        {
            "protocolVersion": 2,
            "info": {"name": "a", "version": "1"},
            "capabilities": {"session": {}},
        },
    ),
    req(1, "session/new", {"cwd": "/tmp", "mcpServers": []}),
    res(1, {"sessionId": "s1"}),
]

CASES: dict[str, list[Line]] = {
    "clean": [
        *SETUP,
        prompt(2, "Can you analyze this code?"),
        upd(
            {
                "sessionUpdate": "user_message_chunk",
                "messageId": "msg_user_1",
                "content": text("Can you analyze this code?"),
            }
        ),
        res(2, {"messageId": "msg_user_1"}),  # the update may arrive before the response
        state("running"),
        upd(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan-1", "entries": []},
            }
        ),
        upd(
            {
                "sessionUpdate": "agent_thought",
                "messageId": "t1",
                "content": [text("Need to inspect.")],
            }
        ),
        chunk("a1", "I'll analyze your code."),
        upd(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "title": "Analyzing",
                "status": "pending",
            }
        ),
        state("requires_action"),
        req(
            "p1",
            "session/request_permission",
            {
                "sessionId": "s1",
                "title": "Analyze",
                "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            },
            sender="agent",
        ),
        res("p1", {"outcome": {"outcome": "selected", "optionId": "allow"}}, sender="client"),
        state("running"),
        upd(
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "in_progress"}
        ),
        upd(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_001",
                "content": {"type": "content", "content": text("Checked syntax...")},
            }
        ),
        upd({"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "completed"}),
        compaction("in_progress"),
        summary_chunk("## Retained context"),
        compaction("completed", summary=[text("## Retained context\n\nAll of it.")]),
        compaction("failed", cid="cmp_2", error="out of memory", summary=[]),
        compaction("_vendor_paused", cid="cmp_3"),
        upd({"sessionUpdate": "notice", "severity": "warning", "title": "MCP server unavailable"}),
        upd({"sessionUpdate": "usage_update", "used": 53000, "size": 200000}),
        upd({"sessionUpdate": "_vendor_ping", "n": 1}),
        state("idle", stopReason="end_turn"),
        state("idle"),  # a repeated snapshot needs no stop reason
        prompt(3, "again"),
        err(3, -32602, "rejected before insertion"),
        *turn(
            4,
            "msg_user_2",
            chunk("a2", "partial"),
            note("session/cancel", {"sessionId": "s1"}),
            chunk("a2", "more, before the idle"),
            stop="cancelled",
        ),
        *turn(5, "msg_user_3", chunk("a3", "custom stop"), stop="_vendor_stop"),
        req(
            6, "session/resume", {"sessionId": "s1", "cwd": "/tmp", "replayFrom": {"type": "start"}}
        ),
        user("msg_user_1", "Can you analyze this code?"),
        compaction("completed", summary=[text("## Retained context\n\nAll of it.")]),
        state("idle"),
        res(6, {}),
    ],
    "prompt-response-message-id": [
        prompt(2, "hello"),
        bad(res(2, {}), "prompt-response-message-id"),
        prompt(3, "again"),
        bad(res(3, {"messageId": None}), "prompt-response-message-id"),
        state("running"),
        state("idle", stopReason="end_turn"),
    ],
    "prompt-message-id-reused": [
        *turn(2, "msg_1"),
        prompt(3, "prompt 3"),
        bad(res(3, {"messageId": "msg_1"}), "prompt-message-id-reused"),
        user("msg_1", "prompt 3"),
        state("running"),
        state("idle", stopReason="end_turn"),
    ],
    "user-message-id-mismatch": [
        prompt(2, "hello"),
        res(2, {"messageId": "msg_returned"}),
        bad(user("msg_other", "hello"), "user-message-id-mismatch"),
        state("running"),
        state("idle", stopReason="end_turn"),
    ],
    "user-message-missing": [
        prompt(2, "hello"),
        bad(res(2, {"messageId": "msg_1"}), "user-message-missing"),
        state("running"),
        chunk("a1", "hi"),
        state("idle", stopReason="end_turn"),
    ],
    "message-id-missing": turn(
        2,
        "msg_1",
        bad(
            upd({"sessionUpdate": "agent_message_chunk", "content": text("x")}),
            "message-id-missing",
        ),
    ),
    "work-without-running": [
        prompt(2, "hello"),
        res(2, {"messageId": "msg_1"}),
        user("msg_1", "hello"),
        bad(chunk("a1", "working already"), "work-without-running"),
        chunk("a1", "reported once per prompt"),
        state("running"),
        state("idle", stopReason="end_turn"),
        prompt(3, "local command"),
        res(3, {"messageId": "msg_2"}),
        user("msg_2", "local command"),
        bad(state("idle", stopReason="end_turn"), "work-without-running"),
    ],
    "idle-without-stop-reason": [
        *turn(2, "msg_1")[:-1],
        bad(state("idle"), "idle-without-stop-reason"),
        *turn(3, "msg_2", state("requires_action"))[:-1],
        bad(state("idle", stopReason=None), "idle-without-stop-reason"),
    ],
    "update-after-cancelled-idle": [
        *turn(
            2,
            "msg_1",
            upd(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "call_1",
                    "status": "in_progress",
                }
            ),
            chunk("a1", "partial"),
            note("session/cancel", {"sessionId": "s1"}),
            stop="cancelled",
        ),
        bad(
            upd(
                {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "cancelled"}
            ),
            "update-after-cancelled-idle",
        ),
        bad(chunk("a1", "late"), "update-after-cancelled-idle"),
    ],
    "compaction-chunk-before-start": [
        bad(summary_chunk("too early"), "compaction-chunk-before-start"),
        compaction("in_progress"),
        summary_chunk("fine"),
        compaction("completed"),
    ],
    "compaction-chunk-after-terminal": [
        compaction("in_progress"),
        compaction("completed"),
        bad(summary_chunk("too late"), "compaction-chunk-after-terminal"),
    ],
    "compaction-terminal-twice": [
        compaction("in_progress"),
        compaction("completed"),
        bad(compaction("failed", error="boom"), "compaction-terminal-twice"),
    ],
    "compaction-id-reused": [
        compaction("in_progress"),
        compaction("cancelled"),
        bad(compaction("in_progress"), "compaction-id-reused"),
        compaction("completed"),
    ],
    "compaction-summary-status": [
        bad(compaction("in_progress", summary=[text("early")]), "compaction-summary-status"),
        bad(compaction("failed", summary=[text("partial")]), "compaction-summary-status"),
    ],
    "compaction-error-status": [
        compaction("in_progress"),
        bad(compaction("completed", error="but it failed?"), "compaction-error-status"),
    ],
    "notice-empty-title": [
        bad(
            upd({"sessionUpdate": "notice", "severity": "info", "title": ""}), "notice-empty-title"
        ),
        bad(upd({"sessionUpdate": "notice", "severity": "info"}), "notice-empty-title"),
        upd({"sessionUpdate": "notice", "severity": "_vendor", "title": "fine"}),
    ],
    "custom-stop-reason": [
        *turn(2, "msg_1", stop="_vendor_reason")[:-1],
        bad(state("idle", stopReason="paused"), "custom-stop-reason"),
        bad(
            upd(
                {
                    "sessionUpdate": "subagent_update",
                    "sessionId": "child",
                    "state": {"state": "idle", "stopReason": "paused"},
                }
            ),
            "custom-stop-reason",
        ),
    ],
    "custom-compaction-status": [
        bad(compaction("archived"), "custom-compaction-status"),
        compaction("_vendor_archived", cid="cmp_2"),
    ],
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    expected: dict[str, list[list[Any]]] = {}
    for name, lines in CASES.items():
        (OUT / f"{name}.jsonl").write_text(
            "".join(json.dumps(m) + "\n" for m, _ in lines), encoding="utf-8"
        )
        expected[f"{name}.jsonl"] = [
            [n, rule] for n, (_, rules) in enumerate(lines, start=1) for rule in rules
        ]
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
