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
routed request cancels the request it became on the next hop, which sends its own
`$/cancel_request` there (ids are hop-local: the message itself is never forwarded);
`session/cancel` is an ordinary notification and is routed like one.

Lifetimes follow `spawn_agent`'s: when the client hangs up, or any component exits, the chain
ends: each component's stdin is closed, then it gets `grace` seconds, SIGTERM, `grace` seconds,
SIGKILL; requests still waiting on a component that is gone are answered -32603 saying so.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jsonrpc import Connection, Limits, PeerGoneError, ReaderLike, WriterLike, spawn
from ..jsonrpc.pipes import open_pipe_reader, open_pipe_writer
from ..peers import DEFAULT_GRACE, stop_process
from .envelope import INITIALIZE, PROXY_INITIALIZE, PROXY_SUCCESSOR, gone, unwrap, wrap


@dataclass
class _Hop:
    """One spawned component: its place, its process and the connection to it."""

    name: str
    proxy: bool
    command: Sequence[str]
    connection: Connection | None = None
    process: asyncio.subprocess.Process | None = None


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
    """Runs `proxies` (each a command, in order from the client) in front of `agent`."""

    def __init__(
        self,
        agent: Sequence[str],
        proxies: Sequence[Sequence[str]] = (),
        *,
        grace: float = DEFAULT_GRACE,
        limits: Limits | None = None,
    ) -> None:
        if not agent:
            raise ValueError("the agent command must not be empty")
        self._hops = [
            _Hop(f"proxy {i + 1} ({shlex.join(cmd)})", True, cmd) for i, cmd in enumerate(proxies)
        ]
        self._hops.append(_Hop(f"agent ({shlex.join(agent)})", False, agent))
        self._grace = grace
        self._limits = limits
        self._front: Connection | None = None
        self._started = False

    # ------------------------------------------------------------------ routing

    def _connection(self, index: int) -> Connection:
        hop = self._hops[index]
        assert hop.connection is not None
        return hop.connection

    async def down(self, index: int, method: str, params: Any) -> Any:
        """Deliver a request to component `index` from its predecessor; its raw result."""
        hop = self._hops[index]
        if method == INITIALIZE and hop.proxy:
            method = PROXY_INITIALIZE  # the component learns from it that it has a successor
        try:
            return await self._connection(index).request(method, params, None)
        except PeerGoneError as exc:
            raise gone(hop.name, exc) from None

    async def notify_down(self, index: int, method: str, params: Any) -> None:
        """Deliver a notification to component `index` from its predecessor."""
        try:
            await self._connection(index).notify(method, params)
        except PeerGoneError:
            pass  # the chain is ending: nobody to deliver to

    async def up(self, index: int, method: str, params: Any) -> Any:
        """Deliver a request from component `index` to its predecessor; its raw result."""
        try:
            if index == 0:
                assert self._front is not None
                return await self._front.request(method, params, None)
            return await self._connection(index - 1).request(
                PROXY_SUCCESSOR, wrap(method, params), None
            )
        except PeerGoneError as exc:
            raise gone("client" if index == 0 else self._hops[index - 1].name, exc) from None

    async def notify_up(self, index: int, method: str, params: Any) -> None:
        """Deliver a notification from component `index` to its predecessor."""
        try:
            if index == 0:
                assert self._front is not None
                await self._front.notify(method, params)
            else:
                await self._connection(index - 1).notify(PROXY_SUCCESSOR, wrap(method, params))
        except PeerGoneError:
            pass

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
                hop.connection, hop.process = await spawn(
                    hop.command, _Back(self, index, hop.proxy), {}, limits=self._limits
                )
        except BaseException:
            await self._stop()
            raise

    async def serve(self, reader: ReaderLike, writer: WriterLike) -> ChainEnd:
        """Spawn the chain, serve the client on `reader`/`writer` until the client hangs up or a
        component exits, then shut every part down. Raises `OSError` when a component cannot be
        started (those already started are stopped)."""
        front = self._front = Connection(_Front(self), {}, reader, writer, limits=self._limits)
        try:
            await self.start()
        except BaseException:
            await front.close()
            raise
        runs: dict[asyncio.Task[None], _Hop | None] = {asyncio.create_task(front.run()): None}
        for hop in self._hops:
            assert hop.connection is not None
            runs[asyncio.create_task(hop.connection.run())] = hop
        try:
            done, _ = await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Components first: requests waiting on them fail now, and their handlers answer
            # the client before its connection closes.
            await self._stop()
            await front.close()
            await asyncio.wait(runs)
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
        return await self._chain.down(0, method, params)

    async def unlisted_notification(self, method: str, params: Any) -> None:
        await self._chain.notify_down(0, method, params)


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
