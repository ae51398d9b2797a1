"""`quiet_when_peer_gone`: an unretrieved `PeerGoneError` (work that outlived its peer) is logged
at debug level only; every other unretrieved exception still reaches the loop's handler."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest
from acp_runtime.jsonrpc import PeerGoneError, quiet_when_peer_gone


async def _raise(error: Exception) -> None:
    raise error


def test_only_peer_gone_errors_are_kept_out_of_the_error_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reported: list[Any] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(context.get("exception")))
        quiet_when_peer_gone(loop)
        quiet_when_peer_gone(loop)  # idempotent: one filter, the earlier handler kept
        gone, other = PeerGoneError("connection closed: the peer left"), ValueError("a real bug")
        tasks = [loop.create_task(_raise(gone)), loop.create_task(_raise(other))]
        await asyncio.wait(tasks)
        del tasks  # nobody retrieves their exceptions
        gc.collect()

    with caplog.at_level(logging.DEBUG, logger="acp_runtime"):
        asyncio.run(main())
    assert [type(e) for e in reported] == [ValueError]
    assert any(
        "the peer left" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records
    )
    assert issubclass(PeerGoneError, ConnectionError)
