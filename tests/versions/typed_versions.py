"""A user's file that serves ACP v1 and v2 from one process and talks to an agent in either
version: it must pass `mypy --strict` and pyright strict with no ignores, and the cross-version
API must type it precisely (`assert_type` fails on `Any`)."""

from __future__ import annotations

import asyncio
import sys
from typing import assert_type

import acp_v1
import acp_v2_draft
from acp_runtime.jsonrpc import Connection, ReaderLike, WriterLike
from acp_runtime.peers import AgentHandler, PeerBase
from acp_runtime.versions import Negotiated, Routed, VersionRouter, negotiate, spawn_negotiated


class V1Agent(acp_v1.Agent):
    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)


class V2Agent(acp_v2_draft.Agent):
    async def initialize(
        self, params: acp_v2_draft.InitializeRequest
    ) -> acp_v2_draft.InitializeResponse:
        info = acp_v2_draft.Implementation(name="typed", version="1")
        return acp_v2_draft.InitializeResponse(protocol_version=2, info=info)


async def serve(reader: ReaderLike, writer: WriterLike) -> None:
    """The agent side: one connection, routed by its first `initialize`."""
    router = VersionRouter({1: V1Agent, 2: V2Agent}, limits=None)
    routed = await router.route(reader, writer)
    if routed is None:
        return
    assert_type(routed.connection, Connection)
    assert_type(routed.version, int)
    handler = routed.handler
    if isinstance(handler, V2Agent):
        assert_type(handler.peer, acp_v2_draft.ClientPeer)
    if isinstance(handler, V1Agent):
        assert_type(handler.peer, acp_v1.ClientPeer)
    await routed.connection.run()


def route_shared(agent: V2Agent) -> VersionRouter[V2Agent]:
    """One handler instance shared by every connection is typed as itself."""
    return VersionRouter({2: agent})


def as_base(routed: Routed[AgentHandler[PeerBase]]) -> AgentHandler[PeerBase]:
    return routed.handler


async def talk(command: list[str]) -> str:
    """The client side: ask for v2, continue in the agent's version."""
    clients = {2: acp_v2_draft.Client(), 1: acp_v1.Client()}
    me = {"name": "typed-client", "version": "1"}
    offers = {
        2: acp_v2_draft.InitializeRequest(
            protocol_version=2, info=acp_v2_draft.Implementation.from_dict(me)
        ),
        1: acp_v1.InitializeRequest(
            protocol_version=1, client_info=acp_v1.Implementation.from_dict(me)
        ),
    }
    negotiated, process = await spawn_negotiated(command, clients, offers)
    assert_type(negotiated.connection, Connection)
    assert_type(process, asyncio.subprocess.Process)
    async with negotiated.connection:
        peer = negotiated.peer
        if isinstance(peer, acp_v1.AgentPeer):
            v1 = await peer.session_new(acp_v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            assert_type(v1, acp_v1.NewSessionResponse)
            answer = v1.session_id
        else:
            assert isinstance(peer, acp_v2_draft.AgentPeer)
            v2 = await peer.session_new(acp_v2_draft.NewSessionRequest(cwd="/"))
            assert_type(v2, acp_v2_draft.NewSessionResponse)
            answer = v2.session_id
    await process.wait()
    return answer


async def talk_v2_only(reader: ReaderLike, writer: WriterLike) -> acp_v2_draft.AgentPeer:
    """Given clients of one version, the peer is that version's, with no narrowing."""
    client = acp_v2_draft.Client()
    offer = acp_v2_draft.InitializeRequest(
        protocol_version=2, info=acp_v2_draft.Implementation(name="c", version="1")
    )
    negotiated = await negotiate(reader, writer, {2: client}, {2: offer})
    assert_type(negotiated, Negotiated[acp_v2_draft.AgentPeer])
    return negotiated.peer


if __name__ == "__main__":
    print(asyncio.run(talk(sys.argv[1:])))
