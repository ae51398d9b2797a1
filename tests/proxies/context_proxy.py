"""A typed proxy on the generated acp_v2_draft package: it adds a context block in front of each
prompt (a typed downstream hook), drops agent chunks that say "secret" on their way back (a typed
upstream hook), and logs every other message's method to the file PROXY_LOG names (raw hooks)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import acp_v2_draft as acp
from acp_runtime.proxies import Proxy, serve_proxy

CONTEXT = "CONTEXT: the project uses tabs."


class ContextProxy(Proxy[acp.AgentPeer, acp.ClientPeer], package=acp):
    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        params.prompt.insert(0, acp.ContentBlockText(text=CONTEXT))
        return await self.successor.session_prompt(params)

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update.to_dict()
        if update.get("sessionUpdate") == "agent_message_chunk":
            if "secret" in str(update.get("content", {}).get("text", "")):
                return
        await self.predecessor.session_update(params)

    def _log(self, direction: str, method: str) -> None:
        path = os.environ.get("PROXY_LOG")
        if path:
            with open(path, "a") as log:
                log.write(f"{direction} {method}\n")

    async def downstream_request(self, method: str, params: Any) -> Any:
        self._log("down", method)
        return await super().downstream_request(method, params)

    async def upstream_notification(self, method: str, params: Any) -> None:
        self._log("up", method)
        await super().upstream_notification(method, params)


if __name__ == "__main__":
    asyncio.run(serve_proxy(ContextProxy()))
