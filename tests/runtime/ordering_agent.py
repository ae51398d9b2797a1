"""An agent on a generated package (argv[1]: acp_v1 or acp_v2_draft) that streams 8 chunks and
then answers session/prompt at once: the client's slow chunk handler must have handled all 8
before its session/prompt call returns (the runtime's ordering guarantee)."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

acp: Any = importlib.import_module(sys.argv[1])
V1 = sys.argv[1] == "acp_v1"
CHUNKS = 8


class StreamingAgent(acp.Agent):  # type: ignore[misc]
    async def session_prompt(self, params: Any) -> Any:
        for i in range(CHUNKS):
            update: dict[str, Any] = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": str(i)},
            }
            if not V1:
                update["messageId"] = "m1"
            notification = acp.SessionNotification if V1 else acp.UpdateSessionNotification
            await self.peer.session_update(
                notification.from_dict({"sessionId": params.session_id, "update": update})
            )
        if V1:
            return acp.PromptResponse.from_dict({"stopReason": "end_turn"})
        return acp.PromptResponse.from_dict({"messageId": "m_user"})


if __name__ == "__main__":
    asyncio.run(acp.serve_agent(StreamingAgent()))
