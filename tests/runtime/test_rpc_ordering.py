"""The ordering guarantee: a response reaches its caller only after every notification received
before it has been handled, with slow handlers on both sides, over real pipes, without deadlock."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from rpc_peers import rpc
from rpc_testkit import HERE, TIMEOUT, EchoParams, EchoResult, pipe

GENERATED = Path(__file__).resolve().parents[2] / "generated"


class Side:
    """A handler for both ends: slow notes, a request that sends notes before answering, a note
    handler that itself awaits a request of ours, and one that waits for an outside event."""

    def __init__(self) -> None:
        self.connection: Any = None
        self.notes: list[int] = []
        self.seen_at_answer: list[int] = []
        self.released = asyncio.Event()

    async def note(self, params: dict[str, Any]) -> None:
        await asyncio.sleep(params.get("delay", 0))
        if params.get("ask"):  # a handler awaiting one of our own requests must not deadlock
            reply = await self.connection.request("echo", {"text": "from a handler"}, EchoResult)
            assert reply.text == "from a handler"
        if params.get("wait_event"):
            await self.released.wait()
        self.notes.append(params["seq"])

    async def echo(self, params: EchoParams) -> EchoResult:
        return EchoResult(text=params.text)

    async def notes_then_answer(self, params: dict[str, Any]) -> EchoResult:
        # notifications first, then the answer: the caller must see them all handled
        for seq in range(params["count"]):
            await self.connection.notify("note", {"seq": seq, "delay": params["delay"]})
        return EchoResult(text="done")

    async def ask_peer(self, params: dict[str, Any]) -> EchoResult:
        # our peer's notes_then_answer: its notes reach *our* slow handler before the answer
        await self.connection.request("notes_then_answer", params, EchoResult)
        self.seen_at_answer.append(len(self.notes))
        return EchoResult(text=str(len(self.notes)))


def table() -> dict[str, Any]:
    spec = rpc.MethodSpec
    return {
        "note": spec("note", "notification", dict[str, Any], None, "note"),
        "echo": spec("echo", "request", EchoParams, EchoResult, "echo"),
        "notes_then_answer": spec(
            "notes_then_answer", "request", dict, EchoResult, "notes_then_answer"
        ),
        "ask_peer": spec("ask_peer", "request", dict, EchoResult, "ask_peer"),
    }


async def two_sides(limits: Any = None) -> tuple[Side, Side, Any, Any]:
    a_reader, a_writer = await pipe()
    b_reader, b_writer = await pipe()
    left, right = Side(), Side()
    left.connection = rpc.Connection(left, table(), b_reader, a_writer, limits=limits)
    right.connection = rpc.Connection(right, table(), a_reader, b_writer, limits=limits)
    return left, right, left.connection, right.connection


async def test_a_response_waits_for_the_slow_handlers_of_earlier_notifications() -> None:
    left, _right, lc, rc = await two_sides()
    async with lc, rc:
        result = await lc.request("notes_then_answer", {"count": 8, "delay": 0.02}, EchoResult)
        # every one of the 8 notes was handled (not merely received) before the result
        assert result.text == "done" and left.notes == list(range(8))


async def test_ordering_holds_on_both_sides_at_once() -> None:
    left, right, lc, rc = await two_sides()
    async with lc, rc:
        # left asks right to ask left: right's answer waits for right's slow note handlers,
        # left's for left's; both sides slow, both directions at once
        both = await asyncio.gather(
            lc.request("ask_peer", {"count": 5, "delay": 0.03}, EchoResult),
            rc.request("ask_peer", {"count": 4, "delay": 0.03}, EchoResult),
        )
        assert [r.text for r in both] == ["5", "4"]
        assert right.seen_at_answer == [5] and left.seen_at_answer == [4]
        assert right.notes == list(range(5)) and left.notes == list(range(4))


async def test_a_notification_handler_awaiting_our_request_does_not_deadlock() -> None:
    left, _right, lc, rc = await two_sides()
    async with lc, rc:
        await rc.notify("note", {"seq": 0, "ask": True})
        await rc.notify("note", {"seq": 1})  # same (shared) key: queued behind the asking handler
        result = await asyncio.wait_for(
            rc.request("notes_then_answer", {"count": 0, "delay": 0}, EchoResult), TIMEOUT
        )
        assert result.text == "done"
        for _ in range(100):
            if left.notes == [0, 1]:
                break
            await asyncio.sleep(0.02)
        assert left.notes == [0, 1]


async def test_a_handler_waiting_for_something_else_is_bounded_by_the_ordering_timeout() -> None:
    left, _right, lc, rc = await two_sides(rpc.Limits(ordering_timeout=0.3))
    async with lc, rc:
        # left's handler of this note waits for an event nobody sets before the response
        await rc.notify("note", {"seq": 7, "wait_event": True})
        result = await asyncio.wait_for(
            lc.request("notes_then_answer", {"count": 0, "delay": 0}, EchoResult), TIMEOUT
        )
        assert result.text == "done"  # delivered after 0.3 s although the handler still waits
        assert left.notes == []
        left.released.set()


@pytest.mark.parametrize("package", ["acp_v1", "acp_v2_draft"])
async def test_generated_client_sees_every_chunk_handled_before_prompt_returns(
    package: str,
) -> None:
    sys.path.insert(0, str(GENERATED))
    try:
        acp = __import__(package)
    finally:
        sys.path.remove(str(GENERATED))

    class SlowClient(acp.Client):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.chunks: list[str] = []

        async def on_agent_message_chunk(self, params: Any, update: Any) -> None:
            await asyncio.sleep(0.02)  # a UI that awaits something per chunk
            self.chunks.append(update.content.text)

    client = SlowClient()
    env = {**os.environ, "PYTHONPATH": str(GENERATED)}
    command = [sys.executable, str(HERE / "ordering_agent.py"), package]
    agent, connection, process = await acp.connect_agent(command, client, env=env)
    async with connection:
        params = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}
        await asyncio.wait_for(agent.session_prompt(acp.PromptRequest.from_dict(params)), TIMEOUT)
        assert client.chunks == [str(i) for i in range(8)]  # all 8, in order, already handled
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
