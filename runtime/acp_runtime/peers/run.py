"""Run a handler over stdio or against an agent process: `serve_agent`, `spawn_agent`,
`connect_agent`. Each takes the handler of any generated package and returns that package's
typed peer (the handler's `attach`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from os import PathLike
from typing import TypeVar, Unpack

from ..jsonrpc import Connection, ConnectionOptions, connect_stdio, spawn
from .base import AgentPeerBase, PeerBase
from .handlers import AgentHandler, ClientHandler
from .process import Serving, StderrOption, agent_process

P = TypeVar("P", bound=PeerBase)
A = TypeVar("A", bound=AgentPeerBase)


def serve_agent(agent: AgentHandler[P], **options: Unpack[ConnectionOptions]) -> Serving[P]:
    """Serve one agent on this process's stdin/stdout.

    `await serve_agent(agent)` serves until the client hangs up; `async with serve_agent(agent) as
    client:` serves for the block and closes the connection on exit. `options` go to
    `Connection` (`limits`, `max_line_bytes`, `order_key`).
    """
    return Serving(lambda: connect_stdio(agent, agent.inbound_methods, **options), agent.attach)


class SpawnOptions(ConnectionOptions, total=False):
    """The keyword options of `spawn_agent`: the agent process's and its connection's."""

    cwd: str | PathLike[str] | None
    """The agent's working directory (default: ours)."""

    env: Mapping[str, str] | None
    """The agent's whole environment (default: ours)."""

    stderr: StderrOption
    """Where the agent's stderr goes (see `spawn_agent`)."""

    grace: float
    """Seconds the agent gets to exit after EOF, and again after SIGTERM."""


@contextlib.asynccontextmanager
async def spawn_agent(
    command: str, *args: str, client: ClientHandler[A], **options: Unpack[SpawnOptions]
) -> AsyncIterator[A]:
    """Run an agent process for the block, which gets the typed agent (`client.peer`).

    Used as `async with spawn_agent("my-agent", client=c) as agent:`.

    On exit the connection closes (EOF on the agent's stdin), then the agent gets `grace` seconds
    to exit, then SIGTERM and `grace` more seconds, then SIGKILL. `stderr`: inherited by default;
    `subprocess.PIPE` captures it into `peer.stderr` (a bounded tail, read as fast as the agent
    writes, so a flood never blocks it), a callable gets each line, a file or DEVNULL takes it.
    """
    async with agent_process([command, *args], client, client.inbound_methods, **options) as (
        connection,
        process,
        tail,
    ):
        peer = client.attach(connection)
        peer.process = process
        peer.stderr = tail
        yield peer


async def connect_agent(
    command: Sequence[str], client: ClientHandler[A], **options: Unpack[ConnectionOptions]
) -> tuple[A, Connection, asyncio.subprocess.Process]:
    """Spawn an agent process and connect `client` to it; the caller runs and closes the
    connection and waits for the process (`spawn_agent` does all of that for a block)."""
    connection, process = await spawn(command, client, client.inbound_methods, **options)
    peer = client.attach(connection)
    peer.process = process
    return peer, connection, process
