"""The agent under attack: a small acp_v2_draft Agent served over stdio by `serve_agent`.

Limits come from the environment (MAX_LINE, STALL, MAX_OUTPUT, INFLIGHT); every extension request it starts is
appended to the file AGENT_LOG, so a test can tell which requests really ran.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import acp_v2_draft as acp
from acp_runtime.jsonrpc import Limits

LOG = os.environ.get("AGENT_LOG")


def record(what: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(what + "\n")


class HostileTarget(acp.Agent):
    def __init__(self) -> None:
        self.notes: list[int] = []

    async def extension_request(self, method: str, params: Any) -> Any:
        record(method)
        if method == "_slow":
            await asyncio.sleep(params["delay"])
            return {"slept": params["delay"]}
        if method == "_count":
            return {"count": len(self.notes), "ordered": self.notes == sorted(self.notes)}
        if method == "_big":
            return {"blob": "b" * params["size"]}
        if method == "_fail":
            raise RuntimeError("password hunter2 leaked from /etc/agent/secret.conf")
        return {"echo": params}

    async def extension_notification(self, method: str, params: Any) -> None:
        if method == "_note":
            self.notes.append(params["seq"])

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        for i in range(8):
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": str(i)},
            }
            await self.peer.session_update(
                acp.UpdateSessionNotification.from_dict(
                    {"sessionId": params.session_id, "update": update}
                )
            )
            await asyncio.sleep(0.02)
        return acp.PromptResponse.from_dict({"messageId": "m_user"})


if __name__ == "__main__":
    limits = Limits(
        max_line_bytes=int(os.environ.get("MAX_LINE", str(1 << 20))),
        write_stall_timeout=float(os.environ.get("STALL", "30")),
        max_output_bytes=int(os.environ.get("MAX_OUTPUT", str(64 << 20))),
        max_inflight_requests=int(os.environ.get("INFLIGHT", "256")),
        shutdown_timeout=5.0,
    )
    asyncio.run(acp.serve_agent(HostileTarget(), limits=limits))
