"""A generated acp_v2_draft agent that knows only stdio MCP servers (no ACP MCP support): on each
prompt it starts every stdio server of its session with the official `mcp` SDK's `Client`, calls
`add(2, 40)` and says what it got. Behind acp-conductor, its servers are the bridge's shims."""

from __future__ import annotations

import asyncio
from typing import Any

import acp_v2_draft as acp
from mcp import Client, StdioServerParameters


class StdioMcpAgent(acp.Agent):
    def __init__(self) -> None:
        self.servers: list[dict[str, Any]] = []

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse.from_dict(
            {
                "protocolVersion": params.protocol_version,
                "info": {"name": "stdio-mcp-agent", "version": "1"},
                "capabilities": {"session": {"mcp": {"stdio": {}}}},
            }
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        self.servers = [server.to_dict() for server in params.mcp_servers]
        return acp.NewSessionResponse.from_dict({"sessionId": "s1"})

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        said = []
        for server in self.servers:
            if server.get("type") != "stdio":
                said.append(f"unexpected {server.get('type')}")
                continue
            stdio = StdioServerParameters(command=server["command"], args=server["args"])
            async with Client(stdio) as mcp:
                result = await mcp.call_tool("add", {"a": 2, "b": 40})
                said.append(f"{server['name']}: {result.content[0].text}")
        update = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "; ".join(said) or "no tools"},
        }
        await self.peer.session_update(
            acp.UpdateSessionNotification.from_dict(
                {"sessionId": params.session_id, "update": update}
            )
        )
        return acp.PromptResponse(message_id="u1")


if __name__ == "__main__":
    asyncio.run(acp.serve_agent(StdioMcpAgent()))
