"""Typed use of the generated packages, as an application writes it.

`test_typed_usage.py` runs `mypy --strict` on this file (with `generated/` on MYPYPATH) and then
runs `main()`. Nothing here needs a cast or an ignore: models are built by Python field names,
open-enum constants go where the enum is expected, unions narrow with `isinstance`.
"""

from __future__ import annotations

from typing import Any

import acp_v1
import acp_v2_draft as acp


def outgoing_updates() -> list[acp.UpdateSessionNotification]:
    """What an agent sends during one prompt."""
    updates: list[acp.SessionUpdate] = [
        acp.SessionUpdateStateUpdateRunning(),
        acp.SessionUpdateAgentMessageChunk(
            message_id="m1", content=acp.ContentBlockText(text="Reading the file")
        ),
        acp.SessionUpdateToolCallUpdate(
            tool_call_id="call_1",
            title="Read main.py",
            kind=acp.ToolKind.READ,
            status=acp.ToolCallStatus.IN_PROGRESS,
            content=[
                acp.ToolCallContentContent(content=acp.ContentBlockText(text="def main(): ..."))
            ],
            locations=[acp.ToolCallLocation(path="/home/user/main.py", line=1)],
        ),
        acp.SessionUpdatePlanUpdate(
            plan=acp.PlanUpdateContentItems(
                plan_id="plan_1",
                entries=[
                    acp.PlanEntry(
                        content="Read",
                        priority=acp.PlanEntryPriority.HIGH,
                        status=acp.PlanEntryStatus.COMPLETED,
                    ),
                    acp.PlanEntry(
                        content="Fix",
                        priority=acp.PlanEntryPriority.MEDIUM,
                        status=acp.PlanEntryStatus.PENDING,
                    ),
                ],
            )
        ),
        acp.SessionUpdateStateUpdateIdleEndTurn(
            usage=acp.Usage(total_tokens=10, input_tokens=7, output_tokens=3)
        ),
    ]
    return [acp.UpdateSessionNotification(session_id="sess_1", update=u) for u in updates]


def describe(update: acp.SessionUpdate) -> str:
    """What a client shows for one update (narrowing the union with isinstance)."""
    if isinstance(update, acp.SessionUpdateAgentMessageChunk):
        block: acp.ContentBlock = update.content
        if isinstance(block, acp.ContentBlockText):
            return "agent: " + block.text
        if isinstance(block, acp.UnknownContentBlock):
            kind: acp.ContentBlockTag = block.type
            return f"agent sent a {kind} block"
        return "agent: (media)"
    if isinstance(update, acp.SessionUpdateToolCallUpdate):
        status: acp.ToolCallStatus | None = update.status
        done = status == acp.ToolCallStatus.COMPLETED
        return f"tool {update.tool_call_id}: {status.value if status else 'unknown'}{' (done)' if done else ''}"
    if isinstance(update, acp.SessionUpdatePlanUpdate):
        plan: acp.PlanUpdateContent = update.plan
        if isinstance(plan, acp.PlanUpdateContentItems):
            return "plan: " + ", ".join(f"{e.content} [{e.status}]" for e in plan.entries)
        return "plan (other form)"
    if isinstance(update, acp.IdleStateUpdateEndTurn):
        reason: acp.StopReason = update.stop_reason
        return f"idle: {reason.value}"
    if isinstance(update, acp.UnknownSessionUpdate):
        tag: acp.SessionUpdateTag = update.session_update
        raw: dict[str, Any] = update.raw
        return f"unknown update {tag} ({'extension' if tag.is_extension else 'future'}, {len(raw)} keys)"
    return type(update).__name__


def stop_reason(idle: acp.IdleStateUpdate) -> acp.StopReason | None:
    """Every variant of `IdleStateUpdate` has `stop_reason`: a `StopReason`, or None when absent."""
    return idle.stop_reason


def parse(wire: bytes) -> acp.UpdateSessionNotification:
    return acp.UpdateSessionNotification.from_json(wire)


def v1_turn() -> tuple[acp_v1.SessionNotification, acp_v1.PromptResponse]:
    note = acp_v1.SessionNotification(
        session_id="s",
        update=acp_v1.SessionUpdateAgentMessageChunk(content=acp_v1.ContentBlockText(text="hi")),
    )
    done = acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.END_TURN)
    return note, done


def main() -> list[str]:
    lines = [describe(n.update) for n in outgoing_updates()]
    incoming = parse(
        b'{"sessionId":"s","update":{"sessionUpdate":"_vendor_progress","percent":50}}'
    )
    lines.append(describe(incoming.update))
    idle = parse(
        b'{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"refusal"}}'
    )
    if isinstance(idle.update, acp.IdleStateUpdateRefusal):
        lines.append(f"stop: {stop_reason(idle.update)}")
    note, done = v1_turn()
    lines.append(note.to_json())
    lines.append(done.to_json())
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
