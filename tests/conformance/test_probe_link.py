"""The probe's link never loses a message the peer sent: a wait for the next message that is
cancelled (the turn loop cancels it when the prompt's answer comes first, and ignores it) is
really cancelled and leaves the message for the next wait; `queued` hands over what was already
received without waiting."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_codegen.probe.link import Link
from acp_codegen.transcript.conformance import Conformance
from acp_codegen.transcript.schema import resolve_revision


def make_link() -> Link:
    """A link whose streams are never used (the tests feed its inbox directly)."""
    return Link(
        "client", asyncio.StreamReader(), None, Conformance(resolve_revision(None)), None, 5.0
    )


@pytest.mark.parametrize("steps", range(6))
def test_a_cancelled_wait_never_drops_the_message_it_was_woken_for(steps: int) -> None:
    async def run() -> list[Any]:
        link = make_link()
        get = asyncio.ensure_future(link.next_message(5))
        await asyncio.sleep(0)
        link.inbox.put_nowait({"jsonrpc": "2.0", "id": "r1", "method": "fs/read_text_file"})
        for _ in range(steps):  # every interleaving of the wake-up with the cancellation
            await asyncio.sleep(0)
        if get.done():
            return [get.result(), *link.queued()]
        get.cancel()  # as the turn loop does when the prompt's answer came first: it ignores `get`
        with pytest.raises(asyncio.CancelledError):
            await get
        return link.queued()

    assert [m["id"] for m in asyncio.run(run())] == ["r1"]


def test_queued_takes_what_was_received_and_keeps_the_close_marker() -> None:
    async def run() -> tuple[list[Any], Any]:
        link = make_link()
        for rid in ("a", "b"):
            link.inbox.put_nowait({"id": rid, "method": "x"})
        link.inbox.put_nowait(None)
        return link.queued(), await link.next_message(1)

    taken, after = asyncio.run(run())
    assert [m["id"] for m in taken] == ["a", "b"] and after is None
