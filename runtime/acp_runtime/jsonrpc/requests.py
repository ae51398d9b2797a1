"""JSON-RPC 2.0 runtime, inbound requests: serving them, and their cancellation.

Owns the requests the peer sent us that are being served: one task each (concurrent, answered
in any order), the ids in flight (a second request with an id in flight is refused), the answer
of every outcome (a result of the wrong type or a handler's exception is -32603 with no
exception text: only an ``RpcError`` raised on purpose carries ``data`` to the peer), and
cancellation, by the peer (``$/cancel_request``) or by our shutdown, both answered -32800 or with
the method's own cancelled result. ``stopped`` (the output is gone) means no new request runs.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic_core

from .framing import (
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    MethodSpec,
    RequestId,
    RpcError,
    _result_frame,
    _to_json,
    encode_error,
)
from .log import PeerLog
from .loop import LoopRef
from .ordering import ORIGIN, Ledger, Origin


def _always() -> bool:
    return True


class InboundRequests:
    """The peer's requests being served by one connection."""

    def __init__(
        self,
        ledger: Ledger,
        reply: Callable[[bytes], None],
        flow: Callable[[], Awaitable[None]],
        log: PeerLog,
        loop: LoopRef,
        must_flow: Callable[[], bool] | None = None,
    ) -> None:
        """``flow()`` waits until the answers written can be taken; ``must_flow()`` tells
        whether it would wait (asked first: no coroutine an answer when it would not)."""
        self._origin = Origin(ledger, None, None)
        self._ledger = ledger
        self._reply = reply
        self._flow = flow
        self._must_flow = _always if must_flow is None else must_flow
        self._log = log
        self._loop = loop
        # Requests being served: their task and method (None: an extension method).
        self._inflight: dict[RequestId, tuple[asyncio.Task[None], MethodSpec | None]] = {}
        self.inflight = self._inflight
        """The same, read-only (its size is what ``Limits.max_inflight_requests`` bounds)."""
        # Cancelled ones that must still be answered (by their task, when it ends).
        self._cancelled: set[RequestId] = set()
        self.stopped = False

    def __len__(self) -> int:
        return len(self._inflight)

    def tasks(self) -> list[asyncio.Task[None]]:
        """The tasks serving requests."""
        return [task for task, _ in self._inflight.values()]

    def start(
        self,
        request_id: RequestId,
        method: str,
        function: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        spec: MethodSpec | None,
    ) -> None:
        """Serve one request in a task of its own."""
        if self.stopped:
            return  # nobody can read the answer
        if request_id in self._inflight:
            # Answered with a null id: the id belongs to the request still being served.
            error = RpcError(
                INVALID_REQUEST, "Invalid Request: request id already in use", {"id": request_id}
            )
            self._reply(encode_error(None, error))
            return
        task = self._loop().create_task(self._serve(request_id, method, function, args, spec))
        self._inflight[request_id] = (task, spec)

    async def _serve(
        self,
        request_id: RequestId,
        method: str,
        function: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        spec: MethodSpec | None,
    ) -> None:
        # A task cancelled before its first step never gets here: `cancel` answers for it.
        # Every other outcome is answered below, and the entry in `_inflight` is ours to remove.
        try:
            ORIGIN.set(self._origin)
            try:
                result = await function(*args)
                frame = _result_frame(request_id, _to_json(result, spec.result if spec else None))
            except RpcError as exc:
                frame = encode_error(request_id, exc)
            except NotImplementedError:
                frame = encode_error(request_id, RpcError.method_not_found(method))
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    # A real cancellation: answer it if asked for, then let it end the task.
                    self._forget(request_id)
                    if request_id in self._cancelled:
                        self._cancelled.discard(request_id)
                        self._answer_cancelled(request_id, spec)
                    raise
                self._log.exception("handler", "handler for %s raised CancelledError", method)
                frame = encode_error(request_id, RpcError.internal_error())
            except Exception:  # noqa: BLE001 (logged with its traceback)
                # Logged here with its traceback; the peer learns only that it failed.
                self._log.exception("handler", "handler for %s failed", method)
                frame = encode_error(request_id, RpcError.internal_error())
            # Done: a $/cancel_request arriving from here on is ignored.
            self._forget(request_id)
            self._cancelled.discard(request_id)
            self._reply(frame)
            if self._must_flow():
                try:
                    await self._flow()
                except ConnectionError:
                    pass  # the connection is closing for this very reason
        finally:
            # One request fewer: reading may resume (said here, not by a done callback of the
            # task, which would cost a turn of the loop a request).
            self._ledger.progress()

    def _forget(self, request_id: RequestId) -> None:
        entry = self._inflight.get(request_id)
        if entry is not None and entry[0] is asyncio.current_task(self._loop()):
            del self._inflight[request_id]

    def _answer_cancelled(self, request_id: RequestId, spec: MethodSpec | None) -> None:
        if self.stopped:
            return
        if spec is not None and spec.cancelled is not None:
            # The method defines its own cancellation result (e.g. a `cancelled` outcome).
            self._reply(_result_frame(request_id, pydantic_core.to_json(spec.cancelled)))
        else:
            self._reply(encode_error(request_id, RpcError(REQUEST_CANCELLED, "Request cancelled")))

    def cancel(self, request_id: RequestId) -> bool:
        """Cancel one request being served (it is answered as cancelled); False if unknown."""
        entry = self._inflight.get(request_id)
        if entry is None or entry[0].done():
            return False
        task, spec = entry
        coro = task.get_coro()
        if inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
            # Not started yet: its coroutine will never run, so the answer is given here.
            del self._inflight[request_id]
            task.cancel()
            self._answer_cancelled(request_id, spec)
            self._ledger.progress()
            return True
        self._cancelled.add(request_id)
        task.cancel()
        return True

    def cancel_all(self) -> list[asyncio.Task[None]]:
        """Cancel every request being served (each answered unless ``stopped``)."""
        tasks = self.tasks()
        for request_id in list(self._inflight):
            self.cancel(request_id)
        return tasks
