"""JSON-RPC 2.0 runtime, the peer: ``Connection``, its parts, and its life.

A connection is assembled from parts that each own one seam: ``LineSplitter`` (intake, with
the pause), ``Dispatcher`` (what a line is and where it goes), ``RequestTable`` (our pending
requests), ``InboundRequests`` (the peer's requests and their cancellation),
``NotificationQueues`` and ``Ledger`` (notifications and the ordering of responses), ``Output``
(bounded writing), ``ReadLoop`` (reading). This module owns the public API, when intake pauses
(the inbound limits), and shutdown: at end of input the messages already received are handled within
``Limits.shutdown_timeout``; ``close()``, a lost output or an overflowing peer end it at once,
every step bounded by ``Limits.close_timeout``. The guarantees are documented in ``jsonrpc``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Literal, Self, TypedDict

import pydantic

from .dispatch import Dispatcher
from .framing import (
    CANCEL_REQUEST_METHOD,
    MethodSpec,
    OrderKey,
    ReaderLike,
    RequestId,
    ResultValidationError,
    WriterLike,
    _notification_frame,
    _request_frame,
    _to_json,
    default_order_key,
    plain_validator,
    validate_value,
)
from .gone import PeerGoneError, quiet_when_peer_gone
from .intake import LineSplitter, ReadLoop
from .limits import (
    DEFAULT_LIMITS,
    LIMIT_TIMEOUT,
    Limits,
    Timeout,
    outside_blocks,
    request_limit,
)
from .log import PeerLog, logger
from .loop import LoopRef
from .notifications import NotificationQueues
from .ordering import Ledger
from .outbound import RequestTable
from .output import Output
from .requests import InboundRequests
from .shutdown import finish_held, finish_received, wind_down

Phase = Literal["new", "reading", "draining", "closing", "closed"]
_RESULT_TYPES_MAX = 256  # result classes whose validator a connection keeps


class ConnectionOptions(TypedDict, total=False):
    """The keyword options of ``Connection``, which everything that makes one passes on."""

    max_line_bytes: int | None
    order_key: OrderKey
    limits: Limits | None


class Connection:
    """One JSON-RPC 2.0 peer connection over newline-delimited JSON streams."""

    def __init__(
        self,
        handler: object,
        inbound: Mapping[str, MethodSpec],
        reader: ReaderLike,
        writer: WriterLike,
        *,
        max_line_bytes: int | None = None,
        order_key: OrderKey = default_order_key,
        limits: Limits | None = None,
    ) -> None:
        limits = DEFAULT_LIMITS if limits is None else limits
        if max_line_bytes is not None:
            if max_line_bytes <= 0:
                raise ValueError("max_line_bytes must be positive")
            limits = dataclasses.replace(limits, max_line_bytes=max_line_bytes)
        self.limits = limits
        self._reader = reader
        self._writer = writer
        log = self._log = PeerLog()
        self._ledger = Ledger(limits.ordering_timeout, log)
        loop = LoopRef()
        self._output = Output(writer, limits, self._output_lost, loop)
        self._table = RequestTable(self._ledger, log, loop)
        self._requests = InboundRequests(
            self._ledger, self._reply, self._output.drain, log, loop, self._output.must_drain
        )
        self._notifications = NotificationQueues(self._ledger, log)
        # What the inbound limits count, read between lines without a call each.
        self._queued, self._serving = self._ledger.open, self._requests.inflight
        parts = (self._table, self._requests, self._notifications)
        dispatch = Dispatcher(handler, inbound, order_key, limits, parts, self._reply, log)
        intake = LineSplitter(
            limits.max_line_bytes, dispatch.line, dispatch.oversized, self._must_pause
        )
        self._reading = ReadLoop(reader, intake, self._output, self._must_pause)
        self._ledger.progress = self._reading.progress
        self.router = False
        """A router's connection (a proxy's, a conductor's) reads on while its output is backed
        up: messages loop through a chain, so what it reads may be what unblocks the peer that
        is not reading. The inbound limits still bound what it holds."""
        self._phase: Phase = "new"
        self._run_task: asyncio.Task[Any] | None = None
        self._owned_run_task: asyncio.Task[None] | None = None
        self._stop_requested = False
        self._hurry = asyncio.Event()
        self._reason: str | None = None  # why the connection was ended from our side
        self._close_done: asyncio.Event | None = None
        self._closed_event = asyncio.Event()  # set once `closed` is true
        self._ending: asyncio.Task[None] | None = None
        self._held: set[asyncio.Task[Any]] = set()
        self._results: dict[type, Callable[[Any], Any]] = {}  # result validators by class

    @classmethod
    def from_streams(cls, *args: Any, **options: Any) -> Connection:
        """Build a connection from a reader and a writer (same as the constructor)."""
        return cls(*args, **options)

    @property
    def closed(self) -> bool:
        """Whether the connection has been closed (EOF, ``close()`` or a broken stream)."""
        return self._phase in ("closing", "closed")

    async def wait_closed(self) -> None:
        """Return once the connection is closed (``closed`` is true): what was received before
        the end has been handled by then."""
        await self._closed_event.wait()

    async def __aenter__(self) -> Self:
        """Start ``run()`` in a background task."""
        self._owned_run_task = asyncio.create_task(self.run())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the connection."""
        await self.close()

    # ------------------------------------------------------------------ outbound

    def _gone(self) -> ConnectionError:
        if self._reason is not None:
            return PeerGoneError(f"connection closed: {self._reason}")
        return PeerGoneError("connection closed")

    async def request(
        self, method: str, params: Any, result_type: Any, *, timeout: Timeout = LIMIT_TIMEOUT
    ) -> Any:
        """Send a request and return its result, validated into ``result_type`` (None: raw).

        ``timeout`` (default: the enclosing ``timeout_block``'s, else ``Limits.request_timeout``;
        ``None``: none) raises ``TimeoutError`` after telling
        the peer to cancel. The result is returned only once the handlers of every notification
        received before it have finished (see ``jsonrpc``).
        """
        limit = request_limit(self, timeout, self.limits.request_timeout)
        params_json = None if params is None else _to_json(params)
        if self._phase != "new" and self._phase != "reading":
            raise (
                self._gone()
                if self.closed
                else PeerGoneError(
                    "connection closed: the peer ended its output, no answer can come"
                )
            )
        request_id, entry = self._table.open(method)
        output = self._output
        try:
            if output.full():
                await output.room()
            output.send(_request_frame(request_id, method, params_json))
            if output.must_drain():
                await output.drain()
            if limit is None:
                raw = await entry.future
            else:
                async with asyncio.timeout(limit):
                    raw = await entry.future
        except TimeoutError:
            self._give_up(request_id)
            raise TimeoutError(f"{method} got no answer within {limit:g} s") from None
        except asyncio.CancelledError:
            self._give_up(request_id)
            raise
        finally:
            self._table.close(request_id)
        if result_type is None:
            return raw
        try:
            if isinstance(result_type, type):  # a class: its validator taken once
                validate = self._results.get(result_type)
                if validate is None:
                    validate = plain_validator(result_type)
                    if len(self._results) < _RESULT_TYPES_MAX:
                        self._results[result_type] = validate
                return validate(raw)
            return validate_value(result_type, raw)
        except pydantic.ValidationError as exc:
            raise ResultValidationError(method, exc) from exc

    def _give_up(self, request_id: int) -> None:
        if self._table.give_up(request_id) and not self.closed:
            frame = _notification_frame(CANCEL_REQUEST_METHOD, b'{"requestId":%d}' % request_id)
            self._reply(frame)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        params_json = None if params is None else _to_json(params)
        if self._phase == "closing" or self._phase == "closed":  # `closed`, inlined
            raise self._gone()
        output = self._output
        if output.full():
            await output.room()
        output.send(_notification_frame(method, params_json))
        if output.must_drain():
            await output.drain()

    async def cancel_request(self, request_id: RequestId) -> None:
        """Ask the peer to cancel one of our requests (``$/cancel_request``)."""
        await self.notify(CANCEL_REQUEST_METHOD, {"requestId": request_id})

    def _reply(self, frame: bytes) -> None:
        """Send an answer; a closed or lost output is logged, not raised."""
        try:
            self._output.send(frame, answer=True)
        except ConnectionError as exc:
            self._log.debug("reply", "could not send a response: %s", exc)

    def hold(self, task: asyncio.Task[Any]) -> None:
        """Hold the connection open for ``task`` (work a handler started that sends on it, such
        as a prompt turn): at end of input it gets ``Limits.turn_timeout`` to finish, on
        ``close()`` none; then it is cancelled and gets ``Limits.close_timeout`` to send its last
        messages before the output closes."""
        if not task.done():
            self._held.add(task)
            task.add_done_callback(self._held.discard)

    # ------------------------------------------------------------------ reading

    def _must_pause(self) -> bool:
        """Whether intake must stop before the next line (asked between lines: kept short)."""
        phase = self._phase
        if phase != "reading" and phase != "new":
            return True
        output = self._output
        if output.answers_unread and not self.router and output.answers_backed_up():
            return True
        limits = self.limits
        queued, serving = len(self._queued), len(self._serving)
        if queued < limits.max_queued_notifications and serving < limits.max_inflight_requests:
            return False
        verdict = limits.inbound(queued, serving, self._table.handler_waits > 0)
        if verdict == "overflow":
            self._end(
                f"the peer sent {queued} notifications and {serving} requests without waiting "
                "while a handler awaited its answer (over the inbound limits)"
            )
        return verdict != "read"

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Read and dispatch messages until EOF or ``close()``, then shut down."""
        if self._run_task is not None:
            raise RuntimeError("Connection.run() may only be called once")
        if self._phase != "new":
            return  # closed before it ran
        self._run_task = asyncio.current_task()
        quiet_when_peer_gone(asyncio.get_running_loop())
        outside_blocks(self)  # the handlers it starts: not bound by a caller's `request_timeout`
        self._phase = "reading"
        self._reading.reading = True
        self._output.start()
        try:
            await self._reading.run()
        except (ConnectionError, OSError) as exc:
            logger.debug("read failed, treating as EOF: %s", exc)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            # Stopped by close() or _end(): return normally unless someone else cancelled us too.
            if not self._stop_requested or task is None or task.uncancel() > 0:
                await self._shutdown(graceful=False)
                raise
        await self._shutdown(graceful=self._reason is None and not self._stop_requested)

    async def close(self) -> None:
        """Stop reading, cancel in-flight work (answered -32800), fail pending requests and
        close the writer; bounded by ``Limits.close_timeout``."""
        self._hurry.set()
        self._stop_reading()
        task = self._run_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            await asyncio.wait([task])
        await self._shutdown(graceful=False)
        owned = self._owned_run_task
        if owned is not None and not owned.done():
            await asyncio.wait([owned])  # it had not started yet: run() returns at once
        if owned is not None and not owned.cancelled():
            exc = owned.exception()
            if exc is not None:
                logger.error("connection run() failed", exc_info=exc)

    def _stop_reading(self) -> None:
        task = self._run_task
        if self._phase == "reading" and task is not None and not task.done():
            self._stop_requested = True
            task.cancel()

    def _end(self, reason: str) -> None:
        """End the connection from our side now (the reason is logged once)."""
        if self._reason is not None or self.closed:
            return
        self._reason = reason
        logger.warning("closing the connection: %s", reason)
        self._hurry.set()
        self._stop_reading()
        if self._run_task is None or self._run_task.done():
            self._ending = asyncio.ensure_future(self._shutdown(graceful=False))

    def _output_lost(self, reason: str, stalled: bool) -> None:
        # Nobody can read answers: no further request runs, those running are cancelled.
        self._requests.stopped = True
        if stalled:
            self._end(reason)  # a peer that does not read could also send without end
            return
        # The peer closed our output but may still be writing (say, its last answers before
        # exiting): reading goes on to the end of input.
        logger.warning("the peer cannot receive any more: %s; no further request runs", reason)
        self._requests.cancel_all()

    async def _shutdown(self, graceful: bool) -> None:
        if self._close_done is not None:
            await self._close_done.wait()
            return
        self._close_done = asyncio.Event()
        try:
            await self._drain_and_close(graceful)
        finally:
            self._phase = "closed"
            self._closed_event.set()
            self._close_done.set()

    async def _drain_and_close(self, graceful: bool) -> None:
        self._phase = "draining"
        self._reading.reading = False
        reason = self._reason or "the peer ended its output before answering"
        self._table.fail_unanswered(PeerGoneError(f"connection closed: {reason}"))
        await finish_held(self._held, self.limits, self._hurry, graceful=graceful)
        if graceful:
            timeout = self.limits.shutdown_timeout
            await finish_received(self._requests, self._notifications, timeout, self._hurry)
        self._phase = "closing"
        self._closed_event.set()
        self._output.release(self._gone())  # writers waiting for the peer fail now
        parts = (self._table, self._requests, self._notifications, self._output)
        await wind_down(parts, self.limits, self._gone(), graceful=graceful)
