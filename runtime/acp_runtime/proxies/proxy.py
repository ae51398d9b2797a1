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
A request cancelled by the peer (`$/cancel_request`) cancels the forwarded one (the connection
sends `$/cancel_request` for it) and is answered -32800, or with the method's own cancelled
answer when its table names one.
"""

from __future__ import annotations

import asyncio
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
    validate_value,
)
from ..peers import Binding, PeerBase, Serving
from .envelope import INITIALIZE, PROXY_INITIALIZE, PROXY_SUCCESSOR, gone, unwrap, wrap

A = TypeVar("A", bound=PeerBase)
C = TypeVar("C", bound=PeerBase)

Direction = Literal["downstream", "upstream"]
_Hook = tuple[MethodSpec, Callable[[Any], Awaitable[Any]]]


class SuccessorLink:
    """What a typed peer sends on to reach a proxy's successor: every request and notification
    goes to the conductor wrapped in `proxy/successor` (duck-typed as a `Connection`)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.limits = connection.limits

    @property
    def closed(self) -> bool:
        """Whether the connection to the conductor has closed."""
        return self.connection.closed

    async def request(
        self, method: str, params: Any, result_type: Any, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send `method` to the successor; its result validated into `result_type` (None: raw)."""
        raw = await self.connection.request(
            PROXY_SUCCESSOR, wrap(method, params), None, timeout=timeout
        )
        return raw if result_type is None else validate_value(result_type, raw)

    async def notify(self, method: str, params: Any) -> None:
        """Send notification `method` to the successor."""
        await self.connection.notify(PROXY_SUCCESSOR, wrap(method, params))

    async def cancel_request(self, request_id: int | str) -> None:
        """Ask the conductor to cancel one of our `proxy/successor` requests."""
        await self.connection.cancel_request(request_id)


class Proxy(Generic[A, C]):
    """Base class of an ACP proxy: forwards every message unchanged; override hooks to change
    that. `class Ctx(Proxy[acp.AgentPeer, acp.ClientPeer], package=acp)` types the hooks and the
    peers with a generated package; without `package` only the raw hooks and senders exist."""

    binding: ClassVar[Binding | None] = None
    """The package's method tables (what the typed hooks are found by)."""
    _peer_types: ClassVar[tuple[Callable[[Any], Any], Callable[[Any], Any]] | None] = None
    _hooks: ClassVar[dict[tuple[str, Direction, bool], _Hook | None]] = {}

    connection: Connection
    """The connection to the conductor (set by `attach`)."""

    def __init_subclass__(cls, package: ModuleType | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._hooks = {}
        if package is not None:
            dispatch = import_module(package.__name__.split(".")[0] + ".dispatch")
            cls.binding = dispatch.BINDING
            cls._peer_types = (dispatch.AgentPeer, dispatch.ClientPeer)

    # ------------------------------------------------------------------ connection

    def attach(self, connection: Connection) -> Proxy[A, C]:
        """Bind this proxy to its conductor's connection (done by `serve_proxy`)."""
        self.connection = connection
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
        """A request on its way to the successor that no typed hook took: forwarded unchanged."""
        return await self.send_downstream(method, params)

    async def downstream_notification(self, method: str, params: Any) -> None:
        """A notification on its way to the successor: forwarded unchanged."""
        await self.notify_downstream(method, params)

    async def upstream_request(self, method: str, params: Any) -> Any:
        """A request on its way to the predecessor (from the successor): forwarded unchanged."""
        return await self.send_upstream(method, params)

    async def upstream_notification(self, method: str, params: Any) -> None:
        """A notification on its way to the predecessor: forwarded unchanged."""
        await self.notify_upstream(method, params)

    # ------------------------------------------------------------------ inbound (the connection)

    async def unlisted_request(self, method: str, params: Any) -> Any:
        """Every request from the conductor (the dispatcher's router hook)."""
        if method == PROXY_SUCCESSOR:
            inner, inner_params = unwrap(params)
            return await self._request("upstream", inner, inner_params)
        if method == PROXY_INITIALIZE:
            return await self._request("downstream", INITIALIZE, params)
        if method == INITIALIZE:
            raise RpcError(
                INVALID_REQUEST,
                f"{type(self).__name__} is a proxy: it expects proxy/initialize from a conductor "
                "(run it with `acp-conductor --proxy ... --agent ...`)",
            )
        return await self._request("downstream", method, params)

    async def unlisted_notification(self, method: str, params: Any) -> None:
        """Every notification from the conductor (the dispatcher's router hook)."""
        if method == PROXY_SUCCESSOR:
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
