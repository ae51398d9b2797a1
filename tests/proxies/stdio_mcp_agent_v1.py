"""A raw protocol-v1 agent that knows only stdio MCP servers (no ACP MCP support): on each prompt it
starts every server of its session with the official `mcp` SDK's `Client`, calls `add(2, 40)`, and
says what it got and the keys of the server entry it was given (v1's stdio entries are untagged:
no `type`). Behind acp-conductor, its servers are the bridge's shims."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_runtime.jsonrpc import Connection, connect_stdio
from mcp import Client, StdioServerParameters


class StdioMcpAgentV1:
    def __init__(self) -> None:
        self.connection: Connection
        self.servers: list[dict[str, Any]] = []

    async def unlisted_request(self, method: str, params: Any) -> Any:
        if method == "initialize":
            capabilities = {"mcpCapabilities": {"http": False, "sse": False}}
            return {"protocolVersion": 1, "agentCapabilities": capabilities, "authMethods": []}
        if method == "session/new":
            self.servers = list(params.get("mcpServers") or [])
            return {"sessionId": "s1"}
        if method == "session/prompt":
            for server in self.servers:
                stdio = StdioServerParameters(command=server["command"], args=server["args"])
                async with Client(stdio) as mcp:
                    result = await mcp.call_tool("add", {"a": 2, "b": 40})
                keys = ",".join(sorted(server))
                text = f"{server['name']}: {result.content[0].text} ({keys})"
                update = {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                }
                await self.connection.notify(
                    "session/update", {"sessionId": "s1", "update": update}
                )
            return {"stopReason": "end_turn"}
        return None

    async def unlisted_notification(self, method: str, params: Any) -> None:
        return None


async def main() -> None:
    agent = StdioMcpAgentV1()
    agent.connection = await connect_stdio(agent, {})
    await agent.connection.run()


if __name__ == "__main__":
    asyncio.run(main())
