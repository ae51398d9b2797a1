"""`Proxy`: the base of an ACP proxy (proxy-chains RFD), which forwards everything by default.

A proxy talks to one peer, its conductor, over one connection. Messages from its predecessor
(the client side) arrive as plain methods and go on to its successor wrapped in
`proxy/successor`; messages from its successor arrive wrapped and go on to the predecessor
plain. `proxy/initialize` goes on as `initialize`, as the RFD requires.

What a message meets on its way, first match wins:

1. a typed hook: a method of the subclass named as the generated handler of that method
   (`session_prompt` for `session/prompt` on its way to the agent, `session_update` for
   `session/update` on its way to the client). Its params are validated into the package's model,
   its result (a model or JSON data) is the answer. It forwards with `self.successor` /
   `self.predecessor`, the package's typed `AgentPeer` and `ClientPeer`.
2. the raw hooks `downstream_request` / `downstream_notification` / `upstream_request` /
   `upstream_notification` (method, params as JSON data), whose defaults forward unchanged.

Pass-through is raw: the JSON value received is the JSON value sent (`_meta`, unknown fields and
methods nobody here knows included); only a message a typed hook takes is read into a model.
A request cancelled by the peer (`$/cancel_request`) and forwarded raw passes the cancellation on
and answers what the far end answers (`jsonrpc.relay`); one a typed hook serves, or one whose
answer does not come in time, is answered -32800, or with the method's own cancelled answer when
its table names one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from importlib import import_module
from types import ModuleType
from typing import Any, ClassVar, Generic, Literal, TypeVar, Unpack, cast

import pydantic

from ..jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_TIMEOUT,
    Connection,
    ConnectionOptions,
    MethodSpec,
    PeerGoneError,
    RpcError,
    Timeout,
    connect_stdio,
    relay,
    to_jsonable,
    validate_value,
)
from ..peers import Binding, PeerBase, Serving
from .envelope import (
    INITIALIZE,
    LEGACY_NOTIFICATION,
    LEGACY_REQUEST,
    MCP_MESSAGE,
    PROXY_INITIALIZE,
    PROXY_SUCCESSOR,
    SESSION_SETUP,
    SuccessorLink,
    gone,
    is_legacy_initialize,
    supports_mcp_acp,
    unwrap,
    wrap,
)

_log = logging.getLogger(__name__)

A = TypeVar("A", bound=PeerBase)
C = TypeVar("C", bound=PeerBase)

Direction = Literal["downstream", "upstream"]
_Hook = tuple[MethodSpec, Callable[[Any], Awaitable[Any]]]


class Proxy(Generic[A, C]):
    """Base class of an ACP proxy: forwards every message unchanged; override hooks to change
    that. `class Ctx(Proxy[acp.AgentPeer, acp.ClientPeer], package=acp, version=2)` types the hooks
    and the peers with a generated package (for chains that negotiated `version`); without
    `package` only the raw hooks and senders exist."""

    binding: ClassVar[Binding | None] = None
    """The package's method tables (what the typed hooks are found by)."""
    _peer_types: ClassVar[tuple[Callable[[Any], Any], Callable[[Any], Any]] | None] = None
    _hooks: ClassVar[dict[tuple[str, Direction, bool], _Hook | None]] = {}

    connection: Connection
    """The connection to the conductor (set by `attach`)."""

    version: ClassVar[int | None] = None
    """The protocol version the typed hooks are for (`version=`): while the chain speaks
    another one, every message passes raw. None: the hooks apply whatever the version."""

    protocol_version: int | None = None
    """The chain's protocol version: the one asked for, then the one the successor answered."""

    mcp_acp_supported: bool = False
    """Whether the successor's `initialize` answer supports ACP MCP servers."""

    _mcp: Any = None  # the McpProvider of `provide_mcp`, made at its first call

    def __init_subclass__(
        cls,
        package: ModuleType | None = None,
        version: int | None = None,
        binding: Binding | None = None,
        peers: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        """`package=` a generated package (or its tables and peers: `binding=`, `peers=(AgentPeer,
        ClientPeer)`, as its generated `Proxy` gives them); `version=` the protocol version the
        typed hooks are for."""
        super().__init_subclass__(**kwargs)
        cls._hooks = {}
        if version is not None:
            cls.version = version
        if package is not None:
            dispatch = import_module(package.__name__.split(".")[0] + ".dispatch")
            binding, peers = dispatch.BINDING, (dispatch.AgentPeer, dispatch.ClientPeer)
        if binding is not None:
            cls.binding = binding
        if peers is not None:
            cls._peer_types = peers

    # ------------------------------------------------------------------ connection

    def attach(self, connection: Connection) -> Proxy[A, C]:
        """Bind this proxy to its conductor's connection (done by `serve_proxy`)."""
        self.connection = connection
        connection.router = True  # both directions loop through this one connection
        self._link = SuccessorLink(connection)
        if self._peer_types is not None:
            agent_peer, client_peer = self._peer_types
            # The typed peers send through the link as if it were a connection.
            self._successor = agent_peer(cast(Connection, self._link))
            self._predecessor = client_peer(connection)
        return self

    @property
    def successor(self) -> A:
        """The typed agent side: what it is sent goes to the successor."""
        return cast(A, self._typed("_successor"))

    @property
    def predecessor(self) -> C:
        """The typed client side: what it is sent goes to the predecessor."""
        return cast(C, self._typed("_predecessor"))

    def _typed(self, name: str) -> Any:
        if self._peer_types is None:
            raise TypeError(f"{type(self).__name__} has no typed peers: subclass with package=")
        return getattr(self, name)

    # ------------------------------------------------------------------ MCP over ACP

    def provide_mcp(self, name: str, server: Any) -> str:
        """Provide an `mcp` SDK server (`Server` or `MCPServer`) to the agent over ACP: it is
        added to every `session/new`, `session/load`, `session/resume` and `session/fork` on its
        way to the agent (`"type": "acp"`, when the agent's `initialize` answer supports ACP MCP
        servers) and its `mcp/message` requests are answered here. Returns its server id. Needs
        the `mcp` extra."""
        from .mcp_acp import McpProvider

        if self._mcp is None:
            self._mcp = McpProvider(lambda method, params: self.notify_downstream(method, params))
        server_id: str = self._mcp.add(name, server)
        return server_id

    def _add_mcp_servers(self, method: str, params: Any) -> None:
        if self._mcp is None or method not in SESSION_SETUP or not isinstance(params, dict):
            return
        if not self.mcp_acp_supported:
            _log.warning("the agent does not support ACP MCP servers: %s gets none", method)
            return
        servers = params.get("mcpServers")
        params["mcpServers"] = [
            *(servers if isinstance(servers, list) else []),
            *self._mcp.declarations(),
        ]

    # ------------------------------------------------------------------ raw senders

    async def send_downstream(
        self, method: str, params: Any = None, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send a request to the successor; its raw result (an error raises `RpcError`)."""
        return await self._link.request(method, params, None, timeout=timeout)

    async def notify_downstream(self, method: str, params: Any = None) -> None:
        """Send a notification to the successor."""
        await self._link.notify(method, params)

    async def send_upstream(
        self, method: str, params: Any = None, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send a request to the predecessor; its raw result."""
        return await self.connection.request(method, params, None, timeout=timeout)

    async def notify_upstream(self, method: str, params: Any = None) -> None:
        """Send a notification to the predecessor."""
        await self.connection.notify(method, params)

    # ------------------------------------------------------------------ raw hooks

    async def downstream_request(self, method: str, params: Any) -> Any:
        """A request on its way to the successor that no typed hook took: forwarded unchanged
        (a cancellation is passed on and the successor's answer to it relayed)."""
        return await self._forward(self._link.methods[0], wrap(method, params))

    async def downstream_notification(self, method: str, params: Any) -> None:
        """A notification on its way to the successor: forwarded unchanged."""
        await self.notify_downstream(method, params)

    async def upstream_request(self, method: str, params: Any) -> Any:
        """A request on its way to the predecessor (from the successor): forwarded unchanged,
        cancellation as for `downstream_request`."""
        return await self._forward(method, params)

    async def upstream_notification(self, method: str, params: Any) -> None:
        """A notification on its way to the predecessor: forwarded unchanged."""
        await self.notify_upstream(method, params)

    async def _forward(self, method: str, params: Any) -> Any:
        if isinstance(self.connection, Connection):
            return await relay(self.connection, method, params)
        # inside a conductor (`LocalLink`): a direct call, relayed at the next real connection
        return await self.connection.request(method, params, None)

    # ------------------------------------------------------------------ inbound (the connection)

    async def unlisted_request(self, method: str, params: Any) -> Any:
        """Every request from the conductor (the dispatcher's router hook)."""
        if method == INITIALIZE and is_legacy_initialize(params):
            # The earlier draft of the RFD (`@thinkwell/conductor` 0.5): answered in kind.
            self._link.methods = (LEGACY_REQUEST, LEGACY_NOTIFICATION)
            result = to_jsonable(await self.unlisted_request(PROXY_INITIALIZE, params))
            if isinstance(result, dict):
                meta = result.get("_meta")
                result["_meta"] = {**(meta if isinstance(meta, dict) else {}), "proxy": True}
            return result
        if method in (PROXY_SUCCESSOR, LEGACY_REQUEST):
            inner, inner_params = unwrap(params)
            if (
                inner == MCP_MESSAGE
                and self._mcp is not None
                and _server(inner_params) in self._mcp
            ):
                return await self._mcp.handle(inner_params)
            return await self._request("upstream", inner, inner_params)
        if method == PROXY_INITIALIZE:
            self.protocol_version = _version_of(params)
            result = await self._request("downstream", INITIALIZE, params)
            answer = to_jsonable(result)
            self.protocol_version = _version_of(answer) or self.protocol_version
            self.mcp_acp_supported = supports_mcp_acp(answer)
            return result
        if method == INITIALIZE:
            raise RpcError(
                INVALID_REQUEST,
                f"{type(self).__name__} is a proxy: it expects proxy/initialize from a conductor "
                "(run it with `acp-conductor --proxy ... --agent ...`)",
            )
        self._add_mcp_servers(method, params)
        return await self._request("downstream", method, params)

    async def unlisted_notification(self, method: str, params: Any) -> None:
        """Every notification from the conductor (the dispatcher's router hook)."""
        if method in (PROXY_SUCCESSOR, LEGACY_NOTIFICATION):
            try:
                inner, inner_params = unwrap(params)
            except RpcError:
                return  # nothing to deliver, nobody to tell
            await self._notification("upstream", inner, inner_params)
        else:
            await self._notification("downstream", method, params)

    async def _request(self, direction: Direction, method: str, params: Any) -> Any:
        hook = self._hook(method, direction, True)
        try:
            if hook is not None:
                spec, function = hook
                return await function(_validate(spec, params))
            if direction == "downstream":
                return await self.downstream_request(method, params)
            return await self.upstream_request(method, params)
        except PeerGoneError as exc:
            raise gone("conductor", exc) from None
        except asyncio.CancelledError:
            # Cancelled by the peer or by shutdown: the method's own cancelled answer, if any.
            answer = self._cancelled_answer(method, direction)
            if answer is None:
                raise
            return answer

    async def _notification(self, direction: Direction, method: str, params: Any) -> None:
        hook = self._hook(method, direction, False)
        try:
            if hook is not None:
                spec, function = hook
                await function(_validate(spec, params))
            elif direction == "downstream":
                await self.downstream_notification(method, params)
            else:
                await self.upstream_notification(method, params)
        except PeerGoneError:
            pass  # the chain is shutting down: nobody to deliver to

    # ------------------------------------------------------------------ typed hooks

    def _table(self, direction: Direction) -> Mapping[str, MethodSpec]:
        binding = self.binding
        if binding is None:
            return {}
        return binding.agent_methods if direction == "downstream" else binding.client_methods

    def _hook(self, method: str, direction: Direction, request: bool) -> _Hook | None:
        if self.version is not None and self.protocol_version != self.version:
            return None  # a version the hooks are not for: the message passes raw
        key = (method, direction, request)
        hooks = type(self)._hooks
        if key not in hooks:
            hooks[key] = self._find_hook(method, direction, request)
        found = hooks[key]
        if found is None:
            return None
        # Found on the class: bind it to this instance.
        return found[0], getattr(self, found[0].handler)

    def _find_hook(self, method: str, direction: Direction, request: bool) -> _Hook | None:
        spec = self._table(direction).get(method)
        if spec is None:
            return None
        if not request:
            spec = spec if spec.kind == "notification" else spec.notification
        elif spec.kind != "request":
            spec = None
        if spec is None:
            return None
        function = getattr(type(self), spec.handler, None)
        return None if function is None else (spec, function)

    def _cancelled_answer(self, method: str, direction: Direction) -> Any:
        spec = self._table(direction).get(method)
        return None if spec is None else spec.cancelled


def _server(params: Any) -> Any:
    return params.get("serverId") if isinstance(params, dict) else None


def _version_of(params: Any) -> int | None:
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if type(version) is int else None


def _validate(spec: MethodSpec, params: Any) -> Any:
    if spec.params is None:
        return None
    try:
        return validate_value(spec.params, {} if params is None else params)
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        raise RpcError(INVALID_PARAMS, "Invalid params", errors) from None


def serve_proxy(proxy: Proxy[Any, Any], **options: Unpack[ConnectionOptions]) -> Serving[Any]:
    """Serve `proxy` on this process's stdin/stdout (its conductor's pipes).

    `asyncio.run(serve_proxy(MyProxy()))` serves until the conductor hangs up; `async with
    serve_proxy(p):` serves for the block. `options` go to `Connection`.
    """
    return Serving(lambda: connect_stdio(proxy, {}, **options), proxy.attach)
