"""The conductor's MCP-over-ACP bridge, for agents without ACP MCP support (the MCP-over-ACP RFD).

When the agent's `initialize` answer does not support ACP MCP servers, the conductor still tells
the components in front of it that it does, and bridges: each `"type": "acp"` server of a session
set up for the agent becomes a stdio server whose command is `mcp_shim.py` (standard library only)
with this bridge's socket and the server id. Each MCP request the agent sends the shim becomes an
`mcp/message` request to the component that provides the server, and its `MessageMcpResponse` the
MCP response; the provider's `mcp/message` notifications about a request reach the agent as MCP
notifications on the shim of that request. No `mcp` SDK is needed: the bridge moves JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..jsonrpc import RpcError
from .envelope import MCP_MESSAGE, SESSION_SETUP, _at, supports_mcp_acp

__all__ = ["MCP_MESSAGE", "SHIM", "McpBridge", "supports_mcp_acp", "with_mcp_acp"]

logger = logging.getLogger(__name__)

SHIM = str(Path(__file__).with_name("mcp_shim.py"))
# A bridge's socket lives in `<tmp>/acp-mcp-<pid>-<random>/`: the pid tells a later bridge whether
# the directory's conductor is gone (killed before it could remove it).
DIR_PREFIX = "acp-mcp-"


def remove_orphaned_dirs(parent: str | None = None) -> list[str]:
    """Remove the socket directories of bridges whose process is gone (a conductor killed by
    SIGKILL cannot remove its own); the paths removed. Only this user's directories are looked
    at, and one whose process is alive is kept (a reused pid keeps it too: never a live one's)."""
    parent = parent or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            pid_text = entry.name[len(DIR_PREFIX) :].partition("-")[0]
            if not (entry.name.startswith(DIR_PREFIX) and pid_text.isdigit()):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != os.getuid() or not entry.is_dir(
                    follow_symlinks=False
                ):
                    continue
                os.kill(int(pid_text), 0)
            except ProcessLookupError:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
            except OSError:  # alive but another user's (EPERM), or gone from under us
                continue
    return removed


def with_mcp_acp(answer: Any) -> Any:
    """`answer` (an `initialize` result) saying that ACP MCP servers are supported (an answer
    without a protocol version is not one: it is left alone)."""
    version = answer.get("protocolVersion") if isinstance(answer, dict) else None
    if not isinstance(answer, dict) or type(version) is not int:
        return answer
    answer = dict(answer)
    if version == 1:
        capabilities = dict(_at(answer, "agentCapabilities") or {})
        capabilities["mcpCapabilities"] = {
            **(_at(capabilities, "mcpCapabilities") or {}),
            "acp": True,
        }
        answer["agentCapabilities"] = capabilities
        return answer
    capabilities = dict(_at(answer, "capabilities") or {})
    session = dict(_at(capabilities, "session") or {})
    session["mcp"] = {**(_at(session, "mcp") or {}), "acp": {}}
    capabilities["session"] = session
    answer["capabilities"] = capabilities
    return answer


class McpBridge:
    """Stdio stand-ins for the ACP MCP servers of one chain; `send` reaches their providers."""

    def __init__(self, send: Callable[[str, Any], Awaitable[Any]], version: int | None) -> None:
        self._send = send
        self._version = version
        remove_orphaned_dirs()
        self._dir = tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-")
        self.path = str(Path(self._dir, "bridge.sock"))
        self._server: asyncio.Server | None = None
        self._ids = itertools.count(1)
        self._requests: dict[str, asyncio.StreamWriter] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen for shims."""
        self._server = await asyncio.start_unix_server(self._serve, self.path)

    async def close(self) -> None:
        """Stop listening, end the shims' calls and remove the socket."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        shutil.rmtree(self._dir, ignore_errors=True)

    def rewrite(self, method: str, params: Any) -> Any:
        """A session setup's params with each ACP MCP server turned into a shim (stdio)."""
        if method not in SESSION_SETUP or not isinstance(params, dict):
            return params
        servers = params.get("mcpServers")
        if not isinstance(servers, list):
            return params
        return {**params, "mcpServers": [self._stdio(server) for server in servers]}

    def _stdio(self, server: Any) -> Any:
        if not isinstance(server, dict) or server.get("type") != "acp":
            return server
        entry: dict[str, Any] = {
            "name": server.get("name", "acp"),
            "command": sys.executable,
            "args": [SHIM, self.path, str(server.get("serverId"))],
            "env": [],
        }
        if self._version != 1:
            entry = {"type": "stdio", **entry}  # v1's stdio servers are the untagged variant
        return entry

    async def deliver(self, params: Any) -> bool:
        """A provider's `mcp/message` notification: to the shim of its request (True), or not
        one of the bridge's requests (False)."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        writer = self._requests.get(request_id) if isinstance(request_id, str) else None
        if writer is None:
            return False
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": params.get("method")}
        if params.get("params") is not None:
            message["params"] = params["params"]
        with contextlib.suppress(ConnectionError):
            writer.write(json.dumps(message).encode() + b"\n")
            await writer.drain()
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        calls: set[asyncio.Task[None]] = set()
        try:
            hello = json.loads(await reader.readline())
            server_id = hello["serverId"]
            while line := await reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                # Only requests reach the provider: the schema has no MCP notification from the
                # consumer (the provider completes the handshake itself), and no server request.
                if isinstance(message, dict) and "method" in message and "id" in message:
                    call = asyncio.create_task(self._call(server_id, message, writer))
                    calls.add(call)
                    call.add_done_callback(calls.discard)
            await asyncio.gather(*calls, return_exceptions=True)
        except (ValueError, KeyError, TypeError, ConnectionError) as exc:
            logger.warning("MCP bridge: a shim broke off: %s", exc)
        finally:
            for call in calls:
                call.cancel()
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _call(self, server_id: str, message: dict[str, Any], writer: Any) -> None:
        request_id = str(next(self._ids))  # unique in the chain: notifications find their shim
        params: dict[str, Any] = {
            "serverId": server_id,
            "requestId": request_id,
            "method": message["method"],
        }
        if message.get("params") is not None:
            params["params"] = message["params"]
        self._requests[request_id] = writer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            answer = await self._send(MCP_MESSAGE, params)
        except RpcError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                reply["error"]["data"] = exc.data
        else:
            if isinstance(answer, dict) and "result" in answer:
                reply["result"] = answer["result"]
            elif isinstance(answer, dict) and isinstance(answer.get("error"), dict):
                reply["error"] = answer["error"]
            else:
                reply["error"] = {"code": -32603, "message": "mcp/message answered neither way"}
        finally:
            self._requests.pop(request_id, None)
        with contextlib.suppress(ConnectionError):
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
