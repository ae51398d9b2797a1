"""MCP over ACP (the pinned draft's `mcp/message`, `McpServerAcp`): MCP servers built with the
official `mcp` SDK, provided through an ACP connection, and the MCP client session that reaches
them. Needs the `mcp` extra (`pip install 'acp-runtime[mcp]'`); nothing MCP is made here.

- `McpProvider` (a client or a proxy): `add(name, server)` declares an `mcp` SDK `Server` or
  `MCPServer` as `{"type": "acp", "name": ..., "serverId": ...}` (what goes into a session's
  `mcpServers`); `handle(params)` answers one `mcp/message` request for it: the inner MCP request
  goes to the server as the same JSON-RPC request, its result or MCP error comes back as the
  `MessageMcpResponse` (`{"result": ...}` or `{"error": ...}`). MCP notifications the server sends
  about an active request go back as `mcp/message` notifications.
- `mcp_over_acp(connection, server_id)` (an agent): a transport for `mcp.Client`: each MCP request
  the client session sends becomes an `mcp/message` request on `connection`, its answer the MCP
  response; `deliver_mcp(connection, params)` (in the agent's `mcp_message` handler) hands the
  provider's `mcp/message` notifications to the session whose request they are about.

A request the consumer withdraws (`$/cancel_request`, which cancels its handler) is cancelled at the
server too (MCP `notifications/cancelled`): the tool stops. The binding's own failures are outer
ACP errors: a server id nobody here provides -33001, a `requestId` already active for the server
-32602, a server that stopped before answering -33002 (the reference TypeScript SDK's codes); an
MCP error of the server is an inner one, in a successful answer. MCP 2026-07-28 requests (no
handshake; the revision, client capabilities and info in each request's `_meta`, as that SDK sends
them) and the earlier handshake revisions both reach the server as sent.

The pinned schema carries no MCP notification from the consumer to the provider: the provider
completes the MCP handshake itself (it sends the server `notifications/initialized` once its
`initialize` is answered); other consumer notifications are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..jsonrpc import INVALID_PARAMS, Connection, RpcError

try:
    import anyio
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import ServerMessageMetadata, SessionMessage
    from mcp_types.jsonrpc import (
        ErrorData,
        JSONRPCError,
        JSONRPCNotification,
        JSONRPCRequest,
        JSONRPCResponse,
    )
except ImportError as exc:  # pragma: no cover (the extra is installed in the tests)
    raise ImportError(
        "MCP over ACP needs the official MCP SDK: pip install 'acp-runtime[mcp]'"
    ) from exc

logger = logging.getLogger(__name__)

MCP_MESSAGE = "mcp/message"
SERVER_UNAVAILABLE = -33001
"""The outer error of an `mcp/message` for a server id nobody here provides."""
BACKEND_FAILED = -33002
"""The outer error of an `mcp/message` whose MCP server stopped without an MCP outcome."""
# The pinned schema names no codes for the binding's own failures; these are the reference
# TypeScript SDK's (`McpBindingErrorCode` of @agentclientprotocol/sdk 2.4.0), so that a consumer
# built on it tells them apart from inner MCP errors, which travel in a successful answer.
Notify = Callable[[str, Any], Awaitable[None]]
"""How a provider sends a notification to the consumer: (ACP method, params)."""


class _Served:
    """One `mcp` SDK server running in this process, spoken to over memory streams."""

    def __init__(self, server_id: str, server: Server[Any]) -> None:
        self.server_id = server_id
        self._server = server
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.Future[Any], str]] = {}
        self._started: asyncio.Future[Any] | None = None
        self._stack = contextlib.AsyncExitStack()
        self._tasks: list[asyncio.Task[Any]] = []
        self._stopped = False
        self.notify: Notify | None = None

    async def _start(self) -> Any:
        streams = await self._stack.enter_async_context(create_client_server_memory_streams())
        (client_read, client_write), (server_read, server_write) = streams
        options = self._server.create_initialization_options()
        for task in (
            asyncio.create_task(self._server.run(server_read, server_write, options)),
            asyncio.create_task(self._read(client_read, client_write)),
        ):
            # Either one ending (the server failing in its lifespan, say, with its streams
            # still open) means no MCP outcome will come: fail what waits, refuse what comes.
            task.add_done_callback(self._stop)
            self._tasks.append(task)
        return client_write

    def _stop(self, _: object = None) -> None:
        self._stopped = True
        for answer, _id in self._waiting.values():
            if not answer.done():
                answer.set_exception(self._stopped_error())

    async def request(self, request_id: str, method: str, params: Any) -> dict[str, Any]:
        """One inner MCP request: its `MessageMcpResponse`."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        write = await asyncio.shield(self._started)
        if self._stopped:
            raise self._stopped_error()
        if any(active == request_id for _, active in self._waiting.values()):
            raise RpcError(INVALID_PARAMS, f"requestId {request_id!r} is already active")
        local = next(self._ids)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[local] = (answer, request_id)
        try:
            message = JSONRPCRequest(jsonrpc="2.0", id=local, method=method, params=params)
            try:
                await write.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise self._stopped_error() from None
            try:
                outcome = await answer
            except asyncio.CancelledError:
                # The consumer withdrew it ($/cancel_request) or the connection is ending: the
                # server stops the tool (MCP cancellation) instead of running it to its end.
                self._cancel(write, local)
                raise
        finally:
            self._waiting.pop(local, None)
        if isinstance(outcome, JSONRPCError):
            return {"error": outcome.error.model_dump(mode="json", exclude_unset=True)}
        if method == "initialize":
            # The consumer cannot send it (no consumer notification in the schema): we do.
            done = JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
            await write.send(SessionMessage(done))
        return {"result": outcome.result}

    def _cancel(self, write: Any, local: int) -> None:
        if self._stopped:
            return
        cancel = JSONRPCNotification(
            jsonrpc="2.0",
            method="notifications/cancelled",
            params={"requestId": local, "reason": "cancelled over ACP"},
        )
        # Sent from a task of its own: the cancelled request's task must not wait for room.
        self._tasks.append(asyncio.create_task(_send_quietly(write, cancel)))

    def _stopped_error(self) -> RpcError:
        return RpcError(BACKEND_FAILED, f"the MCP server {self.server_id!r} has stopped")

    async def _read(self, read: Any, write: Any) -> None:
        async for item in read:
            if isinstance(item, Exception):
                logger.warning("MCP server %s: %s", self.server_id, item)
                continue
            message = item.message
            if isinstance(message, (JSONRPCResponse, JSONRPCError)):
                key = message.id
                waiting = self._waiting.get(key) if isinstance(key, int) else None
                if waiting is not None and not waiting[0].done():
                    waiting[0].set_result(message)
            elif isinstance(message, JSONRPCNotification):
                await self._notification(item, message)
            else:  # a request of the server's (sampling, roots...): no way to the consumer
                error = ErrorData(code=-32601, message="not available over ACP")
                reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                await write.send(SessionMessage(reply))

    async def _notification(self, item: Any, message: Any) -> None:
        metadata = item.metadata
        related = (
            metadata.related_request_id if isinstance(metadata, ServerMessageMetadata) else None
        )
        waiting = self._waiting.get(related) if isinstance(related, int) else None
        if waiting is None or self.notify is None:
            return  # about no active request: the schema has no way to say it
        params = {"serverId": self.server_id, "requestId": waiting[1], "method": message.method}
        if message.params is not None:
            params["params"] = message.params
        with contextlib.suppress(ConnectionError):
            await self.notify(MCP_MESSAGE, params)

    async def close(self) -> None:
        """Stop the server (EOF on its input) and the reader."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._stack.aclose()


class McpProvider:
    """The MCP servers one ACP component provides over ACP, by server id."""

    def __init__(self, notify: Notify | None = None) -> None:
        self._served: dict[str, _Served] = {}
        self._declared: list[dict[str, Any]] = []
        self.notify = notify
        """Sends the consumer the `mcp/message` notifications of active requests."""

    def add(self, name: str, server: Server[Any] | MCPServer, server_id: str | None = None) -> str:
        """Provide `server` as `name`; returns its server id (unique on the connection)."""
        lowlevel = server._lowlevel_server if isinstance(server, MCPServer) else server
        server_id = server_id or f"{name}-{uuid.uuid4().hex[:12]}"
        self._served[server_id] = _Served(server_id, lowlevel)
        self._declared.append({"type": "acp", "name": name, "serverId": server_id})
        return server_id

    def declarations(self) -> list[dict[str, Any]]:
        """The `McpServer` entries (`"type": "acp"`) to put into a session's `mcpServers`."""
        return [dict(entry) for entry in self._declared]

    def __contains__(self, server_id: object) -> bool:
        return server_id in self._served

    async def handle(self, params: Any) -> dict[str, Any]:
        """Answer one `mcp/message` request (its raw params) for one of our servers."""
        if not isinstance(params, dict) or not isinstance(params.get("method"), str):
            raise RpcError(INVALID_PARAMS, "Invalid params: mcp/message needs a string `method`")
        served = self._served.get(params.get("serverId"))  # type: ignore[arg-type]
        if served is None:
            raise RpcError(SERVER_UNAVAILABLE, f"no ACP MCP server {params.get('serverId')!r} here")
        served.notify = self.notify
        return await served.request(
            str(params.get("requestId")), params["method"], params.get("params")
        )

    async def close(self) -> None:
        """Stop every server."""
        await asyncio.gather(*(served.close() for served in self._served.values()))


class McpOverAcp:
    """An `mcp.Client` transport to an ACP MCP server (`mcp_over_acp`)."""

    def __init__(self, connection: Connection, server_id: str) -> None:
        self._connection = connection
        self._server_id = server_id
        self._to_client: Any = None
        # The MCP client numbers its requests from 1; the requestIds on the connection must be
        # unique per server while active, whatever other sessions to it are open: a prefix of
        # our own (which also tells our notifications from theirs).
        self._prefix = f"{uuid.uuid4().hex[:12]}:"

    def takes(self, params: Any) -> bool:
        """Whether an `mcp/message` notification is about one of this session's requests."""
        return (
            isinstance(params, dict)
            and params.get("serverId") == self._server_id
            and str(params.get("requestId", "")).startswith(self._prefix)
        )

    async def deliver(self, params: Any) -> None:
        """Hand over one `mcp/message` notification the provider sent for this session."""
        if self.takes(params):
            await self._hand_over(params)

    async def _hand_over(self, params: Any) -> None:
        if self._to_client is None:
            return
        message = JSONRPCNotification(
            jsonrpc="2.0", method=params["method"], params=params.get("params")
        )
        await _send_quietly(self._to_client, message)  # (a session ending meanwhile)

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The (read, write) streams `mcp.Client` speaks on."""
        to_client_send, to_client_read = anyio.create_memory_object_stream[Any](64)
        from_client_send, from_client_read = anyio.create_memory_object_stream[Any](64)
        self._to_client = to_client_send
        pump = asyncio.create_task(self._pump(from_client_read))
        try:
            yield to_client_read, from_client_send
        finally:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
            self._to_client = None
            for stream in (to_client_send, to_client_read, from_client_send, from_client_read):
                await stream.aclose()

    async def _pump(self, read: Any) -> None:
        calls: set[asyncio.Task[None]] = set()
        try:
            async for item in read:
                message = item.message
                if isinstance(message, JSONRPCRequest):
                    task = asyncio.create_task(self._call(message))
                    calls.add(task)
                    task.add_done_callback(calls.discard)
                # consumer notifications have no way to the provider in the schema
        finally:
            for task in calls:
                task.cancel()

    async def _call(self, message: Any) -> None:
        params: dict[str, Any] = {
            "serverId": self._server_id,
            "requestId": f"{self._prefix}{message.id}",
            "method": message.method,
        }
        if message.params is not None:
            params["params"] = message.params
        reply: Any
        try:
            answer = await self._connection.request(MCP_MESSAGE, params, None)
        except RpcError as exc:
            error = ErrorData(code=exc.code, message=exc.message, data=exc.data)
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        else:
            if isinstance(answer, dict) and "result" in answer:
                result = answer["result"] if isinstance(answer["result"], dict) else {}
                reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
            else:
                inner = answer.get("error") if isinstance(answer, dict) else None
                if not isinstance(inner, dict):
                    inner = {"code": -32603, "message": "mcp/message answered neither way"}
                reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=ErrorData(**inner))
        if self._to_client is not None:
            await _send_quietly(self._to_client, reply)


async def _send_quietly(stream: Any, message: Any) -> None:
    """Send an MCP message on a memory stream, unless its other end has closed already."""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await stream.send(SessionMessage(message))


_open: weakref.WeakKeyDictionary[Any, set[McpOverAcp]] = weakref.WeakKeyDictionary()
"""The `mcp_over_acp` sessions open on each connection (`deliver_mcp` hands them notifications)."""


async def deliver_mcp(connection: Any, params: Any) -> None:
    """Hand an `mcp/message` notification received on `connection` (its raw params) to the
    `mcp_over_acp` session whose request it is about: an agent's `mcp_message` notification
    handler is `await deliver_mcp(self.peer.connection, params.to_dict())`. Progress and other
    notifications of a request then reach the `mcp` client session (its `progress_callback`...);
    one about no open request is dropped, as the schema says."""
    for transport in list(_open.get(connection, ())):
        if transport.takes(params):
            await transport._hand_over(params)
            return


@contextlib.asynccontextmanager
async def mcp_over_acp(connection: Connection, server_id: str) -> AsyncIterator[Any]:
    """An `mcp.Client` session to the ACP MCP server `server_id` that the peer on `connection`
    provides: `async with mcp_over_acp(self.peer.connection, sid) as mcp: await
    mcp.call_tool(...)`. The provider's notifications about its requests reach it through
    `deliver_mcp` (the agent's `mcp_message` handler)."""
    from mcp import Client

    transport = McpOverAcp(connection, server_id)
    sessions = _open.setdefault(connection, set())
    sessions.add(transport)
    try:
        async with transport.streams() as streams:

            @contextlib.asynccontextmanager
            async def connect() -> AsyncIterator[Any]:
                yield streams

            async with Client(connect()) as client:
                client.acp = transport  # type: ignore[attr-defined]
                yield client
    finally:
        sessions.discard(transport)
