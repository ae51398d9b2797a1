"""A minimal agent built on the generated acp_v2_draft package (used by the dispatch tests)."""

from __future__ import annotations

import asyncio
import itertools

import acp_v2_draft as acp


class EchoAgent(acp.Agent):
    """Echoes the prompt text following the prompt lifecycle."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.cancelled: set[str] = set()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse.from_dict(
            {
                "protocolVersion": params.protocol_version,
                "info": {"name": "echo", "version": "1.0"},
                "capabilities": {"session": {}},
            }
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse.from_dict({"sessionId": f"sess_{next(self.ids)}"})

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        message_id = f"msg_user_{next(self.ids)}"
        session = params.session_id
        asyncio.get_running_loop().create_task(self._work(session, message_id, params))
        return acp.PromptResponse(message_id=message_id)

    async def _send(self, session: str, update: dict[str, object]) -> None:
        await self.peer.session_update(
            acp.UpdateSessionNotification.from_dict({"sessionId": session, "update": update})
        )

    async def _work(self, session: str, message_id: str, params: acp.PromptRequest) -> None:
        prompt = [block.to_dict() for block in params.prompt]
        await self._send(
            session, {"sessionUpdate": "user_message", "messageId": message_id, "content": prompt}
        )
        await self._send(session, {"sessionUpdate": "state_update", "state": "running"})
        text = " ".join(str(b.get("text", "")) for b in prompt)
        if "permission" in text:
            outcome = await self.peer.session_request_permission(
                acp.RequestPermissionRequest.from_dict(
                    {
                        "sessionId": session,
                        "title": "Run the pretend tool?",
                        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_1"}},
                        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
                    }
                )
            )
            await self._send(
                session,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m_perm",
                    "content": {"type": "text", "text": outcome.outcome.outcome},
                },
            )
        for word in text.split():
            if session in self.cancelled:
                await self._send(
                    session,
                    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
                )
                return
            await self._send(
                session,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m_1",
                    "content": {"type": "text", "text": word},
                },
            )
            await asyncio.sleep(0.01 if "slow" in text else 0)
        await self._send(session, {"sessionUpdate": "_vendor_ping", "n": 1})
        await self._send(
            session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        )

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.cancelled.add(params.session_id)


if __name__ == "__main__":
    asyncio.run(acp.serve_agent(EchoAgent()))
