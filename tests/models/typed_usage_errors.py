"""Misuses `mypy --strict` must report (each line marked `# E: <error code>`), so the typed
usage check is known to see the generated types rather than `Any`."""

from __future__ import annotations

import acp_v2_draft as acp

acp.ContentBlockText(text=5)  # E: arg-type
acp.SessionUpdateAgentMessageChunk(message_id="m")  # E: call-arg
acp.UpdateSessionNotification(session_id="s", update=acp.ContentBlockText(text="t"))  # E: arg-type
reason: acp.StopReason = acp.ToolKind.READ  # E: assignment
text: str = acp.SessionUpdateToolCallUpdate(tool_call_id="c").status  # E: assignment


def narrow(update: acp.SessionUpdate) -> str:
    return update.tool_call_id  # E: union-attr


def idle(update: acp.IdleStateUpdate) -> acp.StopReason:
    return update.stop_reason  # E: return-value
