"""A raw ACP agent for the proxy tests: it answers each request with what it received, so a test
sees exactly the JSON that crossed the chain.

- any request: `{"method": ..., "params": ...}` as received (so `initialize` vs `proxy/initialize`
  and every `_meta` and unknown field are visible);
- `session/prompt`: first `_updates` (default 20) `session/update` notifications to the client,
  then a `session/request_permission` request, then the echo with the permission answer;
- `_slow`: waits until cancelled and tells the client `_saw_cancel` (the cancellation arrived);
- `_fail`: an error with code, message and data;
- `_exit`: exits the process at once (the chain must shut down);
- notifications: recorded; `session/cancel` is told back as `_saw_session_cancel`; `_seen`
  returns the notifications received so far, in order.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp_runtime.jsonrpc import Connection, RpcError, connect_stdio


class Mirror:
    def __init__(self) -> None:
        self.connection: Connection
        self.seen: list[list[Any]] = []

    async def unlisted_request(self, method: str, params: Any) -> Any:
        if method == "session/prompt":
            session = params["sessionId"]
            for n in range(params.get("_updates", 20)):
                update = {"sessionUpdate": "agent_message_chunk", "n": n, "_meta": {"k": n}}
                await self.connection.notify(
                    "session/update", {"sessionId": session, "update": update}
                )
            answer = await self.connection.request(
                "session/request_permission",
                {"sessionId": session, "title": "ok?", "_meta": {"from": "agent"}},
                None,
            )
            return {"method": method, "params": params, "permission": answer}
        if method == "_slow":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await self.connection.notify("_saw_cancel", params)
                raise
        if method == "_fail":
            raise RpcError(-32042, "refused on purpose", {"why": params})
        if method == "_exit":
            os._exit(3)
        if method == "_seen":
            return self.seen
        return {"method": method, "params": params}

    async def unlisted_notification(self, method: str, params: Any) -> None:
        self.seen.append([method, params])
        if method == "session/cancel":
            await self.connection.notify("_saw_session_cancel", params)


async def main() -> None:
    mirror = Mirror()
    mirror.connection = await connect_stdio(mirror, {})
    await mirror.connection.run()


if __name__ == "__main__":
    asyncio.run(main())
