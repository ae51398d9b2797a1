"""The rules `check-transcript` enforces, as data: ID, the spec's wording, and the vocabulary
(known stop reasons and compaction statuses, which updates count as foreground work).

Known values are those of the current draft schema (`acp_v2_draft`); a test keeps them equal to
the generated enums. A value that is neither known nor `_`-prefixed is reserved for a future ACP
version, so an Agent must not send it.
"""

from __future__ import annotations

from dataclasses import dataclass

# rule ID -> what the spec requires (quoted or closely paraphrased from prompt-lifecycle).
RULES: dict[str, str] = {
    "prompt-response-message-id": (
        "A successful session/prompt response contains the inserted user message's messageId: a "
        "required, non-null string."
    ),
    "prompt-message-id-reused": (
        "Agents MUST assign distinct message IDs to distinct inserted submissions."
    ),
    "user-message-id-mismatch": (
        "All updates for the inserted user message MUST use the returned messageId."
    ),
    "user-message-missing": (
        "The Agent MUST also report the inserted user message through a user_message update or "
        "streamed user_message_chunk updates."
    ),
    "message-id-missing": (
        "The Agent MUST include an opaque messageId on message updates and message chunks."
    ),
    "work-without-running": (
        "When foreground work starts or resumes, the Agent MUST send a state_update with state: "
        "running."
    ),
    "idle-without-stop-reason": (
        "When the idle transition ends foreground work, the Agent MUST include the corresponding "
        "StopReason."
    ),
    "update-after-cancelled-idle": (
        "Updates for cancelled work MUST be sent before the idle state_update that reports "
        "cancellation."
    ),
    "compaction-chunk-before-start": (
        "Agents MUST send the first compaction_update before any chunk for that ID."
    ),
    "compaction-chunk-after-terminal": (
        "Compaction chunks may be sent only after in_progress and before a terminal update."
    ),
    "compaction-terminal-twice": (
        "After in_progress the Agent MUST send exactly one terminal status (completed, failed or "
        "cancelled)."
    ),
    "compaction-id-reused": "A compactionId MUST NOT be reused for another compaction.",
    "compaction-summary-status": "A non-empty summary is only valid with status completed.",
    "compaction-error-status": "error is only valid with status failed.",
    "notice-empty-title": "A notice's title is required, non-null, non-empty plain text.",
    "custom-stop-reason": (
        "Custom stop reasons MUST begin with `_`; unknown others are reserved for future ACP "
        "versions."
    ),
    "custom-compaction-status": (
        "Compaction status values beginning with `_` are for extensions; other unknown values are "
        "reserved for future ACP statuses."
    ),
}

KNOWN_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"}
)
KNOWN_COMPACTION_STATUSES = frozenset({"in_progress", "completed", "failed", "cancelled"})
TERMINAL_COMPACTION_STATUSES = frozenset({"completed", "failed", "cancelled"})
ACTIVE_STATES = frozenset({"running", "requires_action"})

# Updates that carry a `messageId` the spec requires.
MESSAGE_UPDATES = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
        "session_message",
        "session_message_chunk",
    }
)
USER_MESSAGE_UPDATES = frozenset({"user_message", "user_message_chunk"})

# Foreground output: sessionUpdate -> (entity kind, ID field). These are the updates that show
# work is happening and that belong to the work a cancellation ends.
WORK_UPDATES: dict[str, tuple[str, str]] = {
    "agent_message": ("agent_message", "messageId"),
    "agent_message_chunk": ("agent_message", "messageId"),
    "agent_thought": ("agent_thought", "messageId"),
    "agent_thought_chunk": ("agent_thought", "messageId"),
    "tool_call_update": ("tool_call", "toolCallId"),
    "tool_call_content_chunk": ("tool_call", "toolCallId"),
    "terminal_update": ("terminal", "terminalId"),
    "terminal_output_chunk": ("terminal", "terminalId"),
}

# Requests during which the Agent replays history (updates then describe the past, not live work).
REPLAY_REQUESTS = frozenset({"session/resume", "session/load"})


@dataclass(frozen=True, order=True)
class Finding:
    """One violation: the transcript line it was found on, the rule, what happened, the session it
    concerns, the side that broke the rule and the JSON pointer inside the message, when known."""

    line: int
    rule: str
    message: str
    session: str | None = None
    side: str | None = None
    pointer: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        out: dict[str, object] = {"line": self.line, "rule": self.rule, "message": self.message}
        for key in ("session", "side", "pointer"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out
