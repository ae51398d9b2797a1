"""The prompt lifecycle, what differs between protocol versions: the wire form of each update a
turn sends and of the answers the runtime gives, for ACP v1 and v2.

A `Dialect` is picked from a handler's method table (`dialect_of`): v2's `session/prompt` answers
with the inserted message's `messageId`, v1's with the turn's `stopReason`. Everything else the
runtime does the same way for both; what differs is here, as JSON (wire names), so the runtime
needs no generated package. Values are the schema's: v1 has no `cancelled` tool call or plan entry
status and no `error` stop reason (a failed turn answers a JSON-RPC error instead).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]

FINISHED = frozenset({"completed", "failed", "cancelled"})
"""Tool call statuses that end a call."""


def new_id(prefix: str) -> str:
    """A fresh opaque id (sessions, messages, tool calls, plans)."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def text_block(text: str) -> Json:
    """A text content block."""
    return {"type": "text", "text": text}


def block_text(block: Any) -> str:
    """The text of one prompt content block (a model or JSON; links and resources by URI)."""
    data: Mapping[str, Any] = block.to_dict() if hasattr(block, "to_dict") else block
    kind = data.get("type")
    if kind == "text":
        return str(data.get("text", ""))
    if kind == "resource_link":
        return str(data.get("uri", ""))
    if kind == "resource":
        return str(data.get("resource", {}).get("uri", ""))
    return f"[{kind}]"


@dataclass(frozen=True)
class Dialect:
    """The wire of one protocol version's prompt lifecycle."""

    version: int

    @property
    def v2(self) -> bool:
        """Whether prompts are answered at insertion (v2) rather than at the turn's end (v1)."""
        return self.version >= 2

    def stop_reason(self, reason: str) -> str:
        """The stop reason as this version reports it."""
        return reason

    def message_chunk(self, kind: str, message_id: str, text: str) -> Json:
        """An `agent_message_chunk` / `agent_thought_chunk` (v2: with its message id)."""
        update: Json = {"sessionUpdate": f"{kind}_chunk", "content": text_block(text)}
        if self.v2:
            update["messageId"] = message_id
        return update

    def plan(self, plan_id: str, entries: Sequence[Mapping[str, Any]]) -> Json:
        """The plan's entries (each `content`, `priority`, `status`), replacing the last ones."""
        items = [
            {
                "content": str(entry["content"]),
                "priority": str(entry.get("priority", "medium")),
                "status": self._plan_status(str(entry.get("status", "pending"))),
            }
            for entry in entries
        ]
        if not self.v2:
            return {"sessionUpdate": "plan", "entries": items}
        plan = {"type": "items", "planId": plan_id, "entries": items}
        return {"sessionUpdate": "plan_update", "plan": plan}

    def _plan_status(self, status: str) -> str:
        # v1 has no `cancelled` entry: a step that will not run is over, as `completed`.
        return "completed" if status == "cancelled" and not self.v2 else status

    def tool_status(self, status: str) -> str:
        """A tool call status as this version has it (v1: a call not run has `failed`)."""
        return "failed" if status == "cancelled" and not self.v2 else status

    def tool_start(self, call_id: str, title: str, kind: str, raw_input: Any) -> Json:
        """A new tool call, `pending` (v1: `tool_call`; v2: the `tool_call_update` upsert)."""
        update: Json = {
            "sessionUpdate": "tool_call_update" if self.v2 else "tool_call",
            "toolCallId": call_id,
            "title": title,
            "kind": kind,
            "status": "pending",
        }
        if raw_input is not None:
            update["rawInput"] = raw_input
        return update

    def tool_update(
        self, call_id: str, status: str | None, content: list[Json] | None, raw_output: Any
    ) -> Json:
        """A `tool_call_update` (a content list replaces the call's content)."""
        update: Json = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        if status is not None:
            update["status"] = self.tool_status(status)
        if content is not None:
            update["content"] = content
        if raw_output is not None:
            update["rawOutput"] = raw_output
        return update

    def permission(
        self,
        session_id: str,
        call_id: str,
        question: str,
        options: Sequence[Mapping[str, str]],
        description: str | None = None,
    ) -> Json:
        """The params of a `session/request_permission` about one tool call (v1 has no place for
        the question: the tool call's title says what is asked)."""
        listed = [dict(option) for option in options]
        if not self.v2:
            return {"sessionId": session_id, "toolCall": {"toolCallId": call_id}, "options": listed}
        subject = {"type": "tool_call", "toolCall": {"toolCallId": call_id}}
        params = {"sessionId": session_id, "title": question, "options": listed, "subject": subject}
        return params if description is None else {**params, "description": description}

    @staticmethod
    def state(state: str, stop_reason: str | None = None) -> Json:
        """A v2 `state_update` (`idle` ending a turn carries its stop reason)."""
        update: Json = {"sessionUpdate": "state_update", "state": state}
        if stop_reason is not None:
            update["stopReason"] = stop_reason
        return update


def tool_content(text: str) -> Json:
    """A text item of a tool call's content."""
    return {"type": "content", "content": text_block(text)}


ALLOW_OR_REJECT: tuple[Mapping[str, str], ...] = (
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
)
"""The permission options a turn offers by default (`allow` is the one that allows)."""


def allowed(response: Any, allow: frozenset[str]) -> bool:
    """Whether a `session/request_permission` answer (JSON) selected one of the `allow` options;
    `cancelled`, a reject option or an outcome we do not know all refuse."""
    outcome = response.get("outcome") if isinstance(response, Mapping) else None
    if not isinstance(outcome, Mapping) or outcome.get("outcome") != "selected":
        return False
    return outcome.get("optionId") in allow


def was_cancelled(response: Any) -> bool:
    """Whether a `session/request_permission` answer is the `cancelled` outcome."""
    outcome = response.get("outcome") if isinstance(response, Mapping) else None
    return isinstance(outcome, Mapping) and outcome.get("outcome") == "cancelled"


def dialect_of(methods: Mapping[str, Any]) -> Dialect:
    """The dialect of an agent's method table: v2 when `session/prompt` answers a `messageId`."""
    spec = methods.get("session/prompt")
    result = getattr(spec, "result", None)
    fields = getattr(result, "model_fields", {})
    return Dialect(2 if "message_id" in fields else 1)
