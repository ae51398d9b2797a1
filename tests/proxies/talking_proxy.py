"""A raw proxy that speaks for itself, for the tests of a proxy's own messages:

- `_proxy/version` is answered here (the successor never sees it); `_proxy/exit` ends the
  process at once (the chain must shut down, answering what waits on it);
- on each `session/prompt`, before forwarding it: a `session/update` of its own to the client
  (`notify_upstream`), a `_proxy/hello` notification to the agent (`notify_downstream`), and a
  request of its own to each side (`send_downstream("_probe")` to the agent, `send_upstream(
  "_proxy/ask")` to the client), whose answers it adds to the prompt's answer.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp_runtime.proxies import Proxy, serve_proxy


class TalkingProxy(Proxy[Any, Any]):
    async def downstream_request(self, method: str, params: Any) -> Any:
        if method == "_proxy/exit":
            os._exit(4)
        if method == "_proxy/version":
            return {"proxy": "talking", "asked": params}
        if method != "session/prompt":
            return await super().downstream_request(method, params)
        session = params["sessionId"]
        note = {"sessionUpdate": "agent_message_chunk", "from": "proxy"}
        await self.notify_upstream("session/update", {"sessionId": session, "update": note})
        await self.notify_downstream("_proxy/hello", {"sessionId": session})
        agent_said = await self.send_downstream("_probe", {"q": 1})
        client_said = await self.send_upstream("_proxy/ask", {"q": 2})
        answer = await super().downstream_request(method, params)
        return {**answer, "proxyAsked": {"agent": agent_said, "client": client_said}}


if __name__ == "__main__":
    asyncio.run(serve_proxy(TalkingProxy()))
