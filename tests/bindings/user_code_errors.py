"""Misuse the type checkers must report, each on a line marked `# E: <code>` (mypy's code)."""

from __future__ import annotations

import acp_v2_draft as acp


async def misuse(agent: acp.AgentPeer, session: acp.SessionHandle) -> None:
    await session.tool_call_update(tool_call_id="t", status="complted")  # E: arg-type
    await session.agent_message_chunk(5, message_id="m")  # E: arg-type
    await agent.prompt("s", 3)  # E: call-overload
    await agent.prompt("s", "x", message_idd="m")  # E: call-overload
