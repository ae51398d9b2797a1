"""JSON-RPC 2.0 runtime, relaying: a request sent on behalf of a request being served.

A router (a proxy, a conductor) serves a request by sending it on and answering with what comes
back. When the request it serves is cancelled (`$/cancel_request`), an ordinary
`Connection.request` gives up at once: the answer of the next hop is dropped and the router
answers -32800 itself. `relay` instead tells the next hop (`$/cancel_request` for the relayed
request) and waits up to `grace` seconds for its answer, which it returns (or raises, an error):
the answer the requester gets is the one the far end gave (say, a permission request's
`cancelled` outcome), as if there were no hop. Without an answer in time it gives up like
`request`, and the cancellation goes on (-32800).
"""

from __future__ import annotations

import asyncio
from typing import Any

from .connection import Connection
from .framing import CANCEL_REQUEST_METHOD, _notification_frame, _request_frame, _to_json
from .gone import PeerGoneError

DEFAULT_GRACE = 5.0
"""Seconds a relayed request's answer is awaited after its cancellation was passed on."""


async def relay(
    connection: Connection, method: str, params: Any, *, grace: float = DEFAULT_GRACE
) -> Any:
    """Send request `method` on `connection` and return its raw result (an error answer raises
    `RpcError`); when the caller is cancelled, pass the cancellation on and return the answer
    that still comes within `grace` seconds (see the module doc). No time limit otherwise: the
    requester the router serves decides when to give up."""
    if connection._phase not in ("new", "reading"):
        raise (
            connection._gone()
            if connection.closed
            else PeerGoneError("connection closed: the peer ended its output, no answer can come")
        )
    params_json = None if params is None else _to_json(params)
    table = connection._table
    request_id, entry = table.open(method)
    output = connection._output
    try:
        if output.full():
            await output.room()
        output.send(_request_frame(request_id, method, params_json))
        if output.must_drain():
            await output.drain()
        # Awaited as it is (a shield costs a future and two callbacks a relayed request): a
        # cancellation cancels the entry's future, and `renew` gives it a fresh one below.
        return await entry.future
    except asyncio.CancelledError:
        if connection.closed or not table.renew(request_id, entry):
            raise  # closed, or given up: no answer can come
        task = asyncio.current_task()
        if not entry.future.done():  # no answer yet: pass the cancellation on
            frame = _notification_frame(CANCEL_REQUEST_METHOD, b'{"requestId":%d}' % request_id)
            connection._reply(frame)
        try:
            async with asyncio.timeout(grace):
                outcome = await entry.future
        except TimeoutError:
            table.give_up(request_id)
            raise asyncio.CancelledError from None
        except Exception:
            if task is not None:
                task.uncancel()  # answered (with an error): the cancellation is spent
            raise
        if task is not None:
            task.uncancel()
        return outcome
    finally:
        table.close(request_id)
