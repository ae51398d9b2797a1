"""A proxy that gives the agent tools: an MCP server built with the official `mcp` SDK, provided
over ACP (`"type": "acp"` in each new session; its `mcp/message` requests answered here).
`count(n)` reports its progress (MCP `notifications/progress`, which reach the agent as
`mcp/message` notifications when its request asked for them with a `progressToken`)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_runtime.proxies import Proxy, serve_proxy
from mcp.server.mcpserver import Context, MCPServer

calc = MCPServer("calc")


@calc.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@calc.tool()
async def count(n: int, ctx: Context) -> int:
    """Count to n, reporting each step."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n)
    return n


if __name__ == "__main__":
    proxy: Proxy[Any, Any] = Proxy()
    proxy.provide_mcp("calc", calc)
    asyncio.run(serve_proxy(proxy))
