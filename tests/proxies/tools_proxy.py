"""A proxy that gives the agent a tool: an MCP server built with the official `mcp` SDK, provided
over ACP (`"type": "acp"` in each new session; its `mcp/message` requests answered here)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_runtime.proxies import Proxy, serve_proxy
from mcp.server.mcpserver import MCPServer

calc = MCPServer("calc")


@calc.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    proxy: Proxy[Any, Any] = Proxy()
    proxy.provide_mcp("calc", calc)
    asyncio.run(serve_proxy(proxy))
