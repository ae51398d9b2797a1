"""JSON-RPC 2.0 runtime, shutdown: how a connection's parts wind down, within time limits.

Owns the steps every shutdown ends with. ``finish_held`` first lets the work a handler asked the
connection to hold open (``Connection.hold``: a prompt turn) finish, within ``Limits.turn_timeout``
at end of input and at once on ``close()``, then cancels what is left and gives it
``Limits.close_timeout`` to send its last messages. ``finish_received`` (end of input only) lets the
handlers of what was already received finish, for at most ``Limits.shutdown_timeout`` or until
``close()`` hurries it. ``wind_down`` then drops the notifications still queued (logging how many),
fails our pending requests, cancels the requests still being served (each answered -32800 while the
output works) and the running notification handlers, waits for them and closes the output, each wait
bounded by ``Limits.close_timeout``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Set
from typing import Any

from .limits import Limits
from .log import logger
from .notifications import NotificationQueues
from .outbound import RequestTable
from .output import Output
from .requests import InboundRequests


async def finish_held(
    held: Set[asyncio.Task[Any]], limits: Limits, hurry: asyncio.Event, *, graceful: bool
) -> None:
    """Let the held tasks finish (``graceful``: within ``Limits.turn_timeout`` unless hurried),
    cancel those still running, and wait ``Limits.close_timeout`` for them to wind up."""
    tasks = [task for task in held if not task.done()]
    if not tasks:
        return
    if graceful and not hurry.is_set():
        hurried = asyncio.ensure_future(hurry.wait())
        every = asyncio.ensure_future(asyncio.wait(tasks))
        try:
            await asyncio.wait(
                [hurried, every], timeout=limits.turn_timeout, return_when="FIRST_COMPLETED"
            )
        finally:
            hurried.cancel()
            every.cancel()
    # held tasks may have started others (a session's next turn) while we waited
    tasks = [task for task in held if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=limits.close_timeout)


async def finish_received(
    requests: InboundRequests,
    notifications: NotificationQueues,
    timeout: float,
    hurry: asyncio.Event,
) -> None:
    """Wait until every request received is answered and every notification handled."""
    notifications.finish()
    tasks = [*requests.tasks(), *notifications.tasks()]
    if not tasks or hurry.is_set():
        return
    hurried = asyncio.ensure_future(hurry.wait())
    every = asyncio.ensure_future(asyncio.wait(tasks))
    try:
        await asyncio.wait([hurried, every], timeout=timeout, return_when="FIRST_COMPLETED")
    finally:
        hurried.cancel()
        every.cancel()


async def wind_down(
    parts: tuple[RequestTable, InboundRequests, NotificationQueues, Output],
    limits: Limits,
    error: ConnectionError,
    *,
    graceful: bool,
) -> None:
    """Fail, cancel and close everything still going (``graceful``: after ``finish_received``)."""
    table, requests, notifications, output = parts
    notifications.finish()
    serving, queued = len(requests), notifications.drop_queued()
    if graceful and (serving or queued):
        logger.warning(
            "shutdown: %d requests cancelled and %d notifications dropped after %g s",
            serving,
            queued,
            limits.shutdown_timeout,
        )
    table.fail_all(error)
    current = asyncio.current_task()
    tasks = [task for task in requests.cancel_all() if task is not current]
    for task in notifications.tasks():
        if task is not current:
            task.cancel()
            tasks.append(task)
    if tasks:
        await asyncio.wait(tasks, timeout=limits.close_timeout)
    await output.close(limits.close_timeout)
