"""`Conductor`: a proxy chain that a client runs as its agent (the proxy-chains RFD).

The conductor spawns each proxy and the agent with piped stdio and routes between them: a
message from the client goes to the first component; a `proxy/successor` message from proxy `i`
goes, unwrapped, to component `i + 1`; any other message from component `i` goes to its
predecessor, wrapped in `proxy/successor` when that is a proxy, plain when it is the client. The
client's `initialize` becomes `proxy/initialize` for a proxy and stays `initialize` for the agent.

Routing is raw: params and results are passed on as the JSON values received (`_meta` and unknown
fields included, whatever the protocol version), and an error is passed on with its code, message
and data. Order is kept per connection as `jsonrpc` guarantees it (notifications of one session
in arrival order; a response after the notifications sent before it). A `$/cancel_request` for a
routed request is passed on as the next hop's own `$/cancel_request` for the request it became (ids
are hop-local: the message itself is never forwarded), and the answer that still comes back is
relayed (`jsonrpc.relay`): the requester gets what the far end answered, a permission request's
`cancelled` outcome say, not a -32800 of the conductor's. `session/cancel` is an ordinary
notification and is routed like one.

Lifetimes follow `spawn_agent`'s: when the client hangs up, or any component exits, the chain
ends: each component's stdin is closed, then it gets `grace` seconds, SIGTERM, `grace` seconds,
SIGKILL; requests still waiting on a component that is gone are answered -32603 saying so (naming
the component whose exit ended the chain, not one stopped because of it).

Without an agent the conductor is itself a proxy (the RFD's proxy mode, for nested chains): it
expects `proxy/initialize`, and what its last proxy sends on goes to its own conductor.

MCP over ACP: the conductor always tells the client and the proxies that the chain supports ACP
MCP servers; when the agent does not, it bridges them to stdio servers (`mcp_bridge`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..jsonrpc import (
    DEFAULT_LIMITS,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LIMIT_TIMEOUT,
    Connection,
    Limits,
    PeerGoneError,
    ReaderLike,
    RpcError,
    Timeout,
    WriterLike,
    open_pipe_reader,
    open_pipe_writer,
    relay,
    spawn,
    to_jsonable,
    validate_value,
)
from ..peers import DEFAULT_GRACE, stop_process
from .envelope import INITIALIZE, PROXY_INITIALIZE, PROXY_SUCCESSOR, gone, unwrap, wrap
from .mcp_bridge import MCP_MESSAGE, McpBridge, supports_mcp_acp, with_mcp_acp
from .proxy import Proxy


@dataclass
class _Hop:
    """One component: its place, its process (or in-process proxy) and the connection to it."""

    name: str
    proxy: bool
    command: Sequence[str]
    connection: Connection | None = None
    process: asyncio.subprocess.Process | None = None
    local: Proxy[Any, Any] | None = None  # an in-process proxy, called directly


@dataclass(frozen=True)
class ChainEnd:
    """How a chain ended: who left first (None: the client), and each component's exit status."""

    first: str | None
    statuses: dict[str, int | None] = field(default_factory=dict)

    def message(self) -> str | None:
        """One line saying which component ended the chain (None when the client did)."""
        if self.first is None:
            return None
        status = self.statuses.get(self.first)
        return f"the {self.first} exited (status {status}): the chain is shut down"


class Conductor:
    """Runs `proxies` (each a command, or a `Proxy` object run in this process, in order from the
    client) in front of `agent`; with
    `bridge_mcp` (the default) it bridges ACP MCP servers for an agent without ACP MCP support
    (`mcp_bridge`)."""

    def __init__(
        self,
        agent: Sequence[str] | None,
        proxies: Sequence[Sequence[str] | Proxy[Any, Any]] = (),
        *,
        grace: float = DEFAULT_GRACE,
        limits: Limits | None = None,
        bridge_mcp: bool = True,
    ) -> None:
        if agent is not None and not agent:
            raise ValueError("the agent command must not be empty")
        self.proxy_mode = agent is None
        """No agent: the conductor is itself a proxy (nested chains), initialized with
        `proxy/initialize`; what its last proxy sends on goes to its own conductor."""
        self._hops = [
            (
                _Hop(f"proxy {i + 1} ({type(p).__name__}, in process)", True, (), local=p)
                if isinstance(p, Proxy)
                else _Hop(f"proxy {i + 1} ({shlex.join(p)})", True, p)
            )
            for i, p in enumerate(proxies)
        ]
        if agent is not None:
            self._hops.append(_Hop(f"agent ({shlex.join(agent)})", False, agent))
        self._grace = grace
        self._limits = limits
        self._front: Connection | None = None
        self._started = False
        self._bridge: McpBridge | None = None
        self._ended_by: str | None = None  # the component whose exit ended the chain
        self.bridge_mcp = bridge_mcp

    # ------------------------------------------------------------------ routing

    def _connection(self, index: int) -> Connection:
        hop = self._hops[index]
        assert hop.connection is not None
        return hop.connection

    async def down(self, index: int, method: str, params: Any) -> Any:
        """Deliver a request to component `index` from its predecessor; its raw result."""
        if index == len(self._hops):  # proxy mode: past the last proxy is our own successor
            assert self._front is not None
            try:
                return await relay(self._front, PROXY_SUCCESSOR, wrap(method, params))
            except PeerGoneError as exc:
                raise self._gone("conductor in front", exc) from None
        hop = self._hops[index]
        if method == INITIALIZE and hop.proxy:
            method = PROXY_INITIALIZE  # the component learns from it that it has a successor
        if self._bridge is not None and not hop.proxy:
            params = self._bridge.rewrite(method, params)
        if hop.local is not None:  # a direct call: its own forwarding comes back here
            return await hop.local.unlisted_request(method, params)
        try:
            result = await relay(self._connection(index), method, params)
        except PeerGoneError as exc:
            raise self._gone(hop.name, exc) from None
        if method == INITIALIZE and not hop.proxy and self.bridge_mcp:
            result = await self._bridge_if_needed(result)
        return result

    async def _bridge_if_needed(self, answer: Any) -> Any:
        """The agent's `initialize` answer, saying it supports ACP MCP servers: natively, or
        through the bridge started here (the RFD's conductor always advertises it)."""
        if supports_mcp_acp(answer):
            return answer
        if self._bridge is None:
            version = answer.get("protocolVersion") if isinstance(answer, dict) else None
            agent = len(self._hops) - 1
            bridge = McpBridge(lambda m, p: self.up(agent, m, p), version)
            await bridge.start()
            self._bridge = bridge
        return with_mcp_acp(answer)

    async def notify_down(self, index: int, method: str, params: Any) -> None:
        """Deliver a notification to component `index` from its predecessor."""
        if index == len(self._hops):  # proxy mode: to our own successor
            assert self._front is not None
            with contextlib.suppress(PeerGoneError):
                await self._front.notify(PROXY_SUCCESSOR, wrap(method, params))
            return
        bridge = None if self._hops[index].proxy else self._bridge
        if bridge is not None and method == MCP_MESSAGE and await bridge.deliver(params):
            return  # about a request of a bridged server: to its shim
        local = self._hops[index].local
        if local is not None:
            await local.unlisted_notification(method, params)
            return
        try:
            await self._connection(index).notify(method, params)
        except PeerGoneError:
            pass  # the chain is ending: nobody to deliver to

    async def up(self, index: int, method: str, params: Any) -> Any:
        """Deliver a request from component `index` to its predecessor; its raw result."""
        try:
            if index == 0:
                assert self._front is not None
                return await relay(self._front, method, params)
            local = self._hops[index - 1].local
            if local is not None:
                return await local.unlisted_request(PROXY_SUCCESSOR, wrap(method, params))
            return await relay(self._connection(index - 1), PROXY_SUCCESSOR, wrap(method, params))
        except PeerGoneError as exc:
            raise self._gone("client" if index == 0 else self._hops[index - 1].name, exc) from None

    async def notify_up(self, index: int, method: str, params: Any) -> None:
        """Deliver a notification from component `index` to its predecessor."""
        try:
            if index == 0:
                assert self._front is not None
                await self._front.notify(method, params)
            elif (local := self._hops[index - 1].local) is not None:
                await local.unlisted_notification(PROXY_SUCCESSOR, wrap(method, params))
            else:
                await self._connection(index - 1).notify(PROXY_SUCCESSOR, wrap(method, params))
        except PeerGoneError:
            pass

    def _gone(self, role: str, exc: PeerGoneError) -> RpcError:
        """The error a request answers when the component it waited on has gone: naming the
        component whose exit ended the chain, when another one's did (the others are stopped
        then, and "proxy 1 is gone" would hide that proxy 2 died)."""
        ended = self._ended_by
        if ended is not None and ended != role:
            return RpcError(INTERNAL_ERROR, f"the {ended} has exited: the chain is shut down")
        return gone(role, exc)

    # ------------------------------------------------------------------ running

    async def serve_stdio(self) -> ChainEnd:
        """Serve the client on this process's stdin/stdout until the chain ends."""
        import sys

        await self.start()  # first: a command that cannot start is reported before any I/O
        reader = await open_pipe_reader(sys.stdin.buffer)
        writer = await open_pipe_writer(sys.stdout.buffer)
        return await self.serve(reader, writer)

    async def start(self) -> None:
        """Spawn every component (`serve` does it when not done yet). Raises `OSError` when one
        cannot be started, after stopping those already started."""
        if self._started:
            return
        self._started = True
        try:
            for index, hop in enumerate(self._hops):
                if hop.local is not None:
                    hop.local.attach(cast(Connection, LocalLink(self, index)))
                    continue
                back = _Back(self, index, hop.proxy)
                hop.connection, hop.process = await spawn(
                    hop.command, back, {}, limits=self._limits
                )
                hop.connection.router = True  # messages loop through it: see Connection.router
        except BaseException:
            await self._stop()
            raise

    async def serve(self, reader: ReaderLike, writer: WriterLike) -> ChainEnd:
        """Spawn the chain, serve the client on `reader`/`writer` until the client hangs up or a
        component exits, then shut every part down. Raises `OSError` when a component cannot be
        started (those already started are stopped)."""
        front = self._front = Connection(_Front(self), {}, reader, writer, limits=self._limits)
        front.router = True
        try:
            await self.start()
        except BaseException:
            await front.close()
            raise
        runs: dict[asyncio.Task[None], _Hop | None] = {asyncio.create_task(front.run()): None}
        for hop in self._hops:
            if hop.connection is not None:  # an in-process proxy has none
                runs[asyncio.create_task(hop.connection.run())] = hop
        try:
            done, _ = await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
            ended = [runs[task] for task in done]
            if None not in ended:  # a component, not the client, left first (the first in order)
                self._ended_by = next(h.name for h in self._hops if any(h is e for e in ended))
        finally:
            # Components first: requests waiting on them fail now, and their handlers answer
            # the client before its connection closes.
            await self._stop()
            await front.close()
            await asyncio.wait(runs)
            if self._bridge is not None:
                await self._bridge.close()
        ended = [runs[task] for task in done]
        first = None if None in ended else next(hop for hop in ended if hop is not None)
        statuses = {
            hop.name: None if hop.process is None else hop.process.returncode for hop in self._hops
        }
        return ChainEnd(None if first is None else first.name, statuses)

    async def _stop(self) -> None:
        async def stop(hop: _Hop) -> None:
            if hop.connection is not None:
                await hop.connection.close()  # EOF on its stdin
            if hop.process is not None:
                await stop_process(hop.process, self._grace)

        await asyncio.gather(*(stop(hop) for hop in self._hops))


class _Front:
    """The client's connection: everything it sends goes to the first component."""

    def __init__(self, chain: Conductor) -> None:
        self._chain = chain

    async def unlisted_request(self, method: str, params: Any) -> Any:
        chain = self._chain
        if chain.proxy_mode:
            if method == PROXY_SUCCESSOR:  # from our successor: to the last proxy
                inner, inner_params = unwrap(params)
                return await chain.up(len(chain._hops), inner, inner_params)
            if method == PROXY_INITIALIZE:
                method = INITIALIZE  # our chain's initialization (proxy/initialize to proxies)
            elif method == INITIALIZE:
                raise RpcError(INVALID_REQUEST, _MODE_ERROR % ("a proxy", "proxy/initialize"))
        elif method == PROXY_INITIALIZE:
            raise RpcError(INVALID_REQUEST, _MODE_ERROR % ("an agent", "initialize"))
        return await chain.down(0, method, params)

    async def unlisted_notification(self, method: str, params: Any) -> None:
        chain = self._chain
        if chain.proxy_mode and method == PROXY_SUCCESSOR:
            with contextlib.suppress(RpcError):
                inner, inner_params = unwrap(params)
                await chain.notify_up(len(chain._hops), inner, inner_params)
            return
        await chain.notify_down(0, method, params)


_MODE_ERROR = (
    "this conductor runs as %s (with --agent: as an agent; without: as a proxy), so it expects %s"
)


class _Back:
    """A component's connection: `proxy/successor` goes on, anything else goes back."""

    def __init__(self, chain: Conductor, index: int, proxy: bool) -> None:
        self._chain = chain
        self._index = index
        self._proxy = proxy

    async def unlisted_request(self, method: str, params: Any) -> Any:
        if method == PROXY_SUCCESSOR and self._proxy:
            inner, inner_params = unwrap(params)
            return await self._chain.down(self._index + 1, inner, inner_params)
        return await self._chain.up(self._index, method, params)

    async def unlisted_notification(self, method: str, params: Any) -> None:
        if method == PROXY_SUCCESSOR and self._proxy:
            try:
                inner, inner_params = unwrap(params)
            except Exception:  # noqa: BLE001 (a broken envelope carries nothing to deliver)
                return
            await self._chain.notify_down(self._index + 1, inner, inner_params)
        else:
            await self._chain.notify_up(self._index, method, params)


class LocalLink:
    """What an in-process proxy has for a connection: what it sends goes straight into the chain
    (`proxy/successor` to the next component, anything else back to the previous one), no JSON in
    between. Ordering holds as for a connection (each message is passed on within the task that
    carries it); cancellation is the caller's task's, passed on at the next real connection."""

    def __init__(self, chain: Conductor, index: int) -> None:
        self._chain = chain
        self._index = index
        self.limits = chain._limits or DEFAULT_LIMITS
        self.router = True
        self.closed = False

    async def request(
        self, method: str, params: Any, result_type: Any, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send a request on, as the proxy's connection would; its result (`result_type`: typed)."""
        params = to_jsonable(params)
        if method == PROXY_SUCCESSOR:
            inner, inner_params = unwrap(params)
            call = self._chain.down(self._index + 1, inner, inner_params)
        else:
            call = self._chain.up(self._index, method, params)
        limit = None if timeout is LIMIT_TIMEOUT else timeout
        async with asyncio.timeout(limit):
            raw = await call
        return raw if result_type is None else validate_value(result_type, raw)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification on, as the proxy's connection would."""
        params = to_jsonable(params)
        if method == PROXY_SUCCESSOR:
            inner, inner_params = unwrap(params)
            await self._chain.notify_down(self._index + 1, inner, inner_params)
        else:
            await self._chain.notify_up(self._index, method, params)

    async def cancel_request(self, request_id: int | str) -> None:
        """Nothing to do: a direct call is cancelled with its task."""
