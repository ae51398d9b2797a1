"""A generated acp_v2_draft agent that supports ACP MCP servers: on each prompt it opens an MCP
client session (the official `mcp` SDK's `Client`) to every `"type": "acp"` server of its session
through `mcp/message`, lists its tools, calls `add(2, 40)` and says what it got; with a `count`
tool, it also calls `count(3)` and says the progress it was told (the provider's `mcp/message`
notifications, handed to the session by `deliver_mcp`)."""

from __future__ import annotations

import asyncio

import acp_v2_draft as acp
from acp_runtime.proxies.mcp_acp import deliver_mcp, mcp_over_acp


class McpAgent(acp.Agent):
    def __init__(self) -> None:
        self.servers: dict[str, list[str]] = {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse.from_dict(
            {
                "protocolVersion": params.protocol_version,
                "info": {"name": "mcp-agent", "version": "1"},
                "capabilities": {"session": {"mcp": {"acp": {}}}},
            }
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        declared = [server.to_dict() for server in params.mcp_servers or []]
        self.servers["s1"] = [d["serverId"] for d in declared if d.get("type") == "acp"]
        return acp.NewSessionResponse.from_dict({"sessionId": "s1"})

    async def mcp_message(self, params: acp.MessageMcpNotification) -> None:
        await deliver_mcp(self.peer.connection, params.to_dict())

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        said = []
        for server_id in self.servers[params.session_id]:
            async with mcp_over_acp(self.peer.connection, server_id) as mcp:
                tools = await mcp.list_tools()
                result = await mcp.call_tool("add", {"a": 2, "b": 40})
                names = [tool.name for tool in tools.tools]
                text = f"{','.join(names)}: {result.content[0].text}"
                if "count" in names:
                    told: list[float] = []

                    async def progress(
                        done: float, total: float | None, note: str | None, told: list[float] = told
                    ) -> None:
                        told.append(done)

                    await mcp.call_tool("count", {"n": 3}, progress_callback=progress)
                    text += f" (progress {','.join(str(int(n)) for n in told)})"
                said.append(text)
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
    asyncio.run(acp.serve_agent(McpAgent()))
