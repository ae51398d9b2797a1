"""A generated-package agent that withdraws its pending permission request on session/cancel.

Used by the interop tests against the SDK's v2 client: session/prompt inserts the user message
(user_message update) and accepts the prompt, then the work reports running and requires_action
and asks for permission. session/cancel cancels that work; the generated runtime then sends
`$/cancel_request` for the pending session/request_permission, and the work reports idle with
stopReason cancelled. An answer that does arrive is echoed as one agent_message_chunk, followed
by idle/end_turn. A prompt sent while the work runs is held (not inserted) until the work ends.
"""

from __future__ import annotations

import asyncio
import itertools

import acp_v2_draft as acp


class CancellingAgent(acp.Agent):
    """Asks for permission on every prompt; session/cancel withdraws the request."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.work: dict[str, asyncio.Task[None]] = {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse.from_dict(
            {
                "protocolVersion": params.protocol_version,
                "info": {"name": "cancelling", "version": "1.0"},
            }
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse.from_dict({"sessionId": f"sess_{next(self.ids)}"})

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = params.session_id
        busy = self.work.get(session)
        if busy is not None and not busy.done():
            # Held: inserted only once the current work ends. A `$/cancel_request` for this
            # request cancels this handler (not the work) and the runtime answers -32800.
            await asyncio.wait([busy])
        message_id = f"msg_user_{next(self.ids)}"
        content = [block.to_dict() for block in params.prompt]
        await self._send(
            session, {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
        )
        self.work[session] = asyncio.get_running_loop().create_task(self._work(session))
        return acp.PromptResponse(message_id=message_id)

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        task = self.work.pop(params.session_id, None)
        if task is not None:
            task.cancel()

    async def _send(self, session: str, update: dict[str, object]) -> None:
        await self.peer.session_update(
            acp.UpdateSessionNotification.from_dict({"sessionId": session, "update": update})
        )

    async def _work(self, session: str) -> None:
        try:
            await self._send(session, {"sessionUpdate": "state_update", "state": "running"})
            await self._send(session, {"sessionUpdate": "state_update", "state": "requires_action"})
            answer = await self.peer.session_request_permission(
                acp.RequestPermissionRequest.from_dict(
                    {
                        "sessionId": session,
                        "title": "Run the pretend tool?",
                        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_1"}},
                        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
                    }
                )
            )
            await self._send(session, {"sessionUpdate": "state_update", "state": "running"})
            await self._send(
                session,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m_perm",
                    "content": {"type": "text", "text": answer.outcome.outcome},
                },
            )
            await self._send(
                session,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            )
        except asyncio.CancelledError:
            await self._send(
                session,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
            )


if __name__ == "__main__":
    asyncio.run(acp.serve_agent(CancellingAgent()))
