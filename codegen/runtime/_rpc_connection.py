"""JSON-RPC 2.0 runtime, the peer: ``Connection``.

Owns one connection's state and life: outbound requests and notifications and their pending
answers, the inbound framing of the byte stream into lines, the dispatch of requests (a task
each, with cancellation) and of notifications (queued per order key, one worker per key), the
answers and their flow control, and closing. The ordering guarantees are in ``_rpc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Mapping
from types import TracebackType
from typing import Any, Self

import pydantic
import pydantic_core

from ._rpc_framing import (
    _ABANDONED_MAX,
    _IDLE_WORKERS_MAX,
    _READ_CHUNK,
    _SNIFF_BYTES,
    CANCEL_REQUEST_METHOD,
    DEFAULT_MAX_LINE_BYTES,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SHARED_ORDER_KEY,
    Job,
    MethodSpec,
    OrderKey,
    ReaderLike,
    RequestId,
    ResultValidationError,
    RpcError,
    WriterLike,
    _error_frame,
    _exception_text,
    _invalid_params,
    _is_id,
    _notification_frame,
    _request_frame,
    _request_problem,
    _response_problem,
    _result_frame,
    _sniff_envelope,
    _to_json,
    _validate,
    default_order_key,
)
from ._rpc_pipes import _drain_check, _PipeReader

# Named after the facade module, as it was before the runtime was split.
logger = logging.getLogger(__name__.rpartition(".")[0] + "._rpc")


class Connection:
    """One JSON-RPC 2.0 peer connection over newline-delimited JSON streams."""

    def __init__(
        self,
        handler: object,
        inbound: Mapping[str, MethodSpec],
        reader: ReaderLike,
        writer: WriterLike,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        order_key: OrderKey = default_order_key,
    ) -> None:
        if max_line_bytes <= 0:
            raise ValueError("max_line_bytes must be positive")
        self._handler = handler
        self._inbound = inbound
        self._reader = reader
        self._writer = writer
        self._must_drain = _drain_check(writer)
        self._max_line_bytes = max_line_bytes
        self._buf = bytearray()  # the start of a line whose end has not arrived yet
        self._discarding = False
        self._order_key = order_key
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._abandoned: set[RequestId] = set()
        # Inbound requests being served: their task and method (None: an extension method).
        self._inflight: dict[RequestId, tuple[asyncio.Task[None], MethodSpec | None]] = {}
        self._peer_cancelled: set[RequestId] = set()
        # Notifications by order key: a queue each, drained by one worker task per key. An idle
        # worker waits on its entry in `_idle` (oldest first) for more; past `_IDLE_WORKERS_MAX`
        # idle keys the oldest worker retires and its key starts afresh on its next message.
        self._queues: dict[Hashable, deque[Job]] = {}
        self._workers: dict[Hashable, asyncio.Task[None]] = {}
        self._idle: dict[Hashable, asyncio.Future[bool]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._run_started = False
        self._run_task: asyncio.Task[Any] | None = None
        self._owned_run_task: asyncio.Task[None] | None = None
        self._closed = False
        self._stop_requested = False
        self._close_done: asyncio.Event | None = None

    @classmethod
    def from_streams(
        cls,
        handler: object,
        inbound: Mapping[str, MethodSpec],
        reader: ReaderLike,
        writer: WriterLike,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        order_key: OrderKey = default_order_key,
    ) -> Connection:
        """Build a connection from a reader and a writer (same as the constructor)."""
        return cls(
            handler,
            inbound,
            reader,
            writer,
            max_line_bytes=max_line_bytes,
            order_key=order_key,
        )

    @property
    def closed(self) -> bool:
        """Whether the connection has been closed (EOF, ``close()`` or a broken stream)."""
        return self._closed

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

    async def request(self, method: str, params: Any, result_type: Any) -> Any:
        """Send a request and return its result, validated into ``result_type`` (None: raw)."""
        request_id = self._next_id
        self._next_id += 1
        frame = _request_frame(request_id, method, None if params is None else _to_json(params))
        if self._closed:
            raise ConnectionError("connection closed")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._send(frame)
            if self._must_drain():
                await self._writer.drain()
            raw = await future
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is not None and not self._closed:
                self._abandon(request_id)
                with contextlib.suppress(ConnectionError, OSError):
                    await self.cancel_request(request_id)
            raise
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        if result_type is None:
            return raw
        try:
            return _validate(result_type, raw)
        except pydantic.ValidationError as exc:
            raise ResultValidationError(method, exc) from exc

    def _abandon(self, request_id: int) -> None:
        # Remember cancelled ids so that the peer's late answer is not reported as unknown.
        if len(self._abandoned) >= _ABANDONED_MAX:
            self._abandoned.clear()
        self._abandoned.add(request_id)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send(_notification_frame(method, None if params is None else _to_json(params)))
        if self._must_drain():
            await self._writer.drain()

    async def cancel_request(self, request_id: RequestId) -> None:
        """Ask the peer to cancel one of our requests (``$/cancel_request``)."""
        await self.notify(CANCEL_REQUEST_METHOD, {"requestId": request_id})

    def _send(self, frame: bytes) -> None:
        # Frames are written whole and in call order; nobody waits for the transport unless its
        # buffer is above the high-water mark (see `_drain_check`).
        if self._closed:
            raise ConnectionError("connection closed")
        self._writer.write(frame)

    async def _write(self, frame: bytes) -> None:
        self._send(frame)
        if self._must_drain():
            await self._writer.drain()

    def _reply(self, frame: bytes) -> None:
        """Send an answer; a broken or closed stream is logged, not raised."""
        try:
            self._send(frame)
        except (ConnectionError, OSError, RuntimeError) as exc:
            logger.debug("could not send a response: %s", exc)

    def _reply_error(self, request_id: RequestId | None, error: RpcError) -> None:
        self._reply(_error_frame(request_id, error))

    def _backed_up(self) -> bool:
        return not self._closed and self._must_drain()

    async def _flow_control(self) -> None:
        """Wait while our own answers are backed up (the peer is not reading them)."""
        if self._must_drain() and not self._closed:
            try:
                await self._writer.drain()
            except (ConnectionError, OSError) as exc:
                logger.debug("could not send a response: %s", exc)

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Read and dispatch messages until EOF or ``close()``, then shut down."""
        if self._run_started:
            raise RuntimeError("Connection.run() may only be called once")
        self._run_started = True
        self._run_task = asyncio.current_task()
        if self._closed:
            return
        try:
            await self._read_loop()
        except (ConnectionError, OSError) as exc:
            logger.debug("read failed, treating as EOF: %s", exc)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            # Stopped by close(): return normally unless someone else cancelled us too.
            if not self._stop_requested or task is None or task.uncancel() > 0:
                raise
        finally:
            await self._shutdown()

    async def close(self) -> None:
        """Stop reading, cancel in-flight work, fail pending requests and close the writer."""
        task = self._run_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            self._stop_requested = True
            task.cancel()
            await asyncio.wait([task])
        await self._shutdown()
        owned = self._owned_run_task
        if owned is not None and not owned.done():
            await asyncio.wait([owned])  # it had not started yet: run() returns at once
        if owned is not None and not owned.cancelled():
            exc = owned.exception()
            if exc is not None:
                logger.error("connection run() failed", exc_info=exc)

    async def _shutdown(self) -> None:
        if self._closed:
            if self._close_done is not None:
                await self._close_done.wait()
            return
        self._closed = True
        self._close_done = asyncio.Event()
        # Synchronous part first, so that the state is consistent even if we get cancelled.
        current = asyncio.current_task()
        tasks = [
            task
            for task in (
                *(task for task, _ in self._inflight.values()),
                *self._workers.values(),
                *self._background,
            )
            if task is not current
        ]
        for task in tasks:
            task.cancel()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("connection closed"))
        self._pending.clear()
        self._queues.clear()
        self._idle.clear()
        try:
            self._writer.close()
        except (ConnectionError, OSError, RuntimeError) as exc:
            logger.debug("closing the writer failed: %s", exc)
        try:
            if tasks:
                await asyncio.wait(tasks)
            wait_closed: Callable[[], Awaitable[None]] | None = getattr(
                self._writer, "wait_closed", None
            )
            if wait_closed is not None:
                try:
                    await wait_closed()
                except (ConnectionError, OSError, RuntimeError, AttributeError) as exc:
                    logger.debug("waiting for the writer to close failed: %s", exc)
        finally:
            self._close_done.set()

    # ------------------------------------------------------------------ inbound framing

    async def _read_loop(self) -> None:
        reader = self._reader
        if isinstance(reader, _PipeReader):
            # Chunks are handed over straight from the transport's callback (no task hop).
            await reader.attach(self._feed, self._backed_up, self._flow_control)
        else:
            read = reader.read
            feed = self._feed
            while True:
                chunk = await read(_READ_CHUNK)
                if not chunk:
                    break
                feed(chunk)
                await self._flow_control()
        buf = self._buf
        if buf and not self._discarding:  # last line without a trailing newline
            self._buf = bytearray()
            self._handle_line(buf)

    def _feed(self, chunk: bytes) -> None:
        """Frame and dispatch every complete line of ``chunk``; keep the rest for later.

        Dispatch is synchronous: requests start their tasks, notifications are queued for their
        worker, responses resolve their callers, errors are answered.
        """
        limit = self._max_line_bytes
        handle = self._handle_line
        pos = 0
        end = len(chunk)
        while pos < end:
            newline = chunk.find(b"\n", pos)
            if newline < 0:
                if not self._discarding:
                    buf = self._buf
                    buf += memoryview(chunk)[pos:]
                    if len(buf) > limit:
                        head = bytes(buf[:_SNIFF_BYTES])
                        self._buf = bytearray()
                        self._discarding = True  # inside an oversized line, already answered
                        self._reject_oversized(head)
                break
            if self._discarding:
                self._discarding = False
            elif self._buf:
                line = self._buf
                line += memoryview(chunk)[pos:newline]
                self._buf = bytearray()
                if len(line) > limit:
                    self._reject_oversized(bytes(line[:_SNIFF_BYTES]))
                else:
                    handle(line)
            elif newline - pos > limit:
                self._reject_oversized(chunk[pos : pos + _SNIFF_BYTES])
            else:
                handle(chunk[pos:newline])
            pos = newline + 1

    def _reject_oversized(self, head: bytes) -> None:
        request_id, is_response = _sniff_envelope(head)
        error = RpcError(
            INVALID_REQUEST,
            f"Frame too large: lines are limited to {self._max_line_bytes} bytes",
            {"maxLineBytes": self._max_line_bytes},
        )
        logger.warning("discarding a line longer than %d bytes", self._max_line_bytes)
        if is_response:
            # Never echo a response's id: the peer would take it for an answer to its own request.
            if isinstance(request_id, int):
                self._fail_pending(request_id, error)
            request_id = None
        self._reply_error(request_id, error)

    def _handle_line(self, line: bytes | bytearray) -> None:
        try:
            message = pydantic_core.from_json(line, allow_inf_nan=False)
        except ValueError as exc:
            if not line or line.isspace():
                return
            self._reply_error(None, RpcError(PARSE_ERROR, "Parse error", str(exc)))
            return
        if not isinstance(message, dict):
            text = (
                "Invalid Request: batches are not supported"
                if isinstance(message, list)
                else "Invalid Request: a message must be a JSON object"
            )
            self._reply_error(None, RpcError(INVALID_REQUEST, text))
            return
        if "method" not in message and ("result" in message or "error" in message):
            self._handle_response(message)
            return
        raw_id = message.get("id")
        reply_id: RequestId | None = raw_id if _is_id(raw_id) else None
        problem = _request_problem(message)
        if problem is not None:
            self._reply_error(reply_id, RpcError(INVALID_REQUEST, problem))
            return
        method: str = message["method"]
        params = message.get("params")
        try:
            if "id" in message:
                self._handle_request(message["id"], method, params)
            else:
                self._handle_notification(method, params)
        except Exception as exc:  # e.g. a validator or order_key raising something unexpected
            logger.exception("dispatching %s failed", method)
            if "id" in message:
                self._reply_error(reply_id, RpcError.internal_error(_exception_text(exc)))

    # ------------------------------------------------------------------ inbound responses

    def _handle_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        problem = _response_problem(message)
        if problem is not None:
            logger.warning("malformed response from peer: %s", problem)
            error = RpcError(INVALID_REQUEST, f"Invalid Response: {problem}")
            if isinstance(request_id, int) and not isinstance(request_id, bool):
                self._fail_pending(request_id, error)
            # Answer with a null id only: echoing the id would look like an answer to the
            # peer's own request with that id.
            self._reply_error(None, error)
            return
        if request_id is None:
            logger.warning("peer reported an error without an id: %r", message["error"])
            return
        future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None:
            if request_id in self._abandoned:
                self._abandoned.discard(request_id)
                logger.debug("late response for cancelled request %r ignored", request_id)
            else:
                logger.warning("response for unknown request id %r ignored", request_id)
            return
        if future.done():
            return
        if "error" in message:
            error_obj = message["error"]
            future.set_exception(
                RpcError(error_obj["code"], error_obj["message"], error_obj.get("data"))
            )
        else:
            future.set_result(message["result"])

    def _fail_pending(self, request_id: int, error: RpcError) -> None:
        future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            future.set_exception(error)

    # ------------------------------------------------------------------ inbound requests

    def _handle_request(self, request_id: RequestId, method: str, params: Any) -> None:
        function: Callable[..., Awaitable[Any]]
        args: tuple[Any, ...]
        spec = self._inbound.get(method)
        if spec is not None:
            # The table reflects the receiving side (e.g. mcp/message is a request one way and a
            # notification the other), so its kind wins; a mismatch is an invalid message.
            if spec.kind != "request":
                self._reply_error(
                    request_id,
                    RpcError(INVALID_REQUEST, f"Invalid Request: {method} is a notification"),
                )
                return
            found = getattr(self._handler, spec.handler, None)
            if found is None:
                self._reply_error(request_id, RpcError.method_not_found(method))
                return
            try:
                value = self._validate_params(spec, params)
            except pydantic.ValidationError as exc:
                self._reply_error(request_id, _invalid_params(exc))
                return
            function, args = found, (value,)
        elif method == CANCEL_REQUEST_METHOD:
            self._reply_error(
                request_id,
                RpcError(INVALID_REQUEST, f"Invalid Request: {method} is a notification"),
            )
            return
        else:
            hook = getattr(self._handler, "extension_request", None)
            if not method.startswith("_") or hook is None:
                self._reply_error(request_id, RpcError.method_not_found(method))
                return
            function, args = hook, (method, params)
        if request_id in self._inflight:
            self._reply_error(
                request_id, RpcError(INVALID_REQUEST, "Invalid Request: request id already in use")
            )
            return
        task = asyncio.create_task(self._serve(request_id, method, function, args, spec))
        self._inflight[request_id] = (task, spec)

    @staticmethod
    def _validate_params(spec: MethodSpec, params: Any) -> Any:
        if spec.params is None:
            return None  # the method takes no params: whatever was sent is ignored
        return _validate(spec.params, {} if params is None else params)

    async def _serve(
        self,
        request_id: RequestId,
        method: str,
        function: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        spec: MethodSpec | None,
    ) -> None:
        # A task cancelled before its first step never gets here: `_cancel_inbound` answers
        # for it. Every other outcome is answered below, and the entry in `_inflight` is ours to
        # remove.
        try:
            result = await function(*args)
            frame = _result_frame(request_id, _to_json(result, spec.result if spec else None))
        except RpcError as exc:
            frame = _error_frame(request_id, exc)
        except NotImplementedError:
            frame = _error_frame(request_id, RpcError.method_not_found(method))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # A real cancellation: answer it if the peer asked for it, then let it end the task.
                self._forget(request_id)
                if request_id in self._peer_cancelled:
                    self._peer_cancelled.discard(request_id)
                    self._answer_cancelled(request_id, spec)
                raise
            logger.exception("handler for %s raised CancelledError", method)
            frame = _error_frame(request_id, RpcError.internal_error("CancelledError"))
        except Exception as exc:
            logger.exception("handler for %s failed", method)
            frame = _error_frame(request_id, RpcError.internal_error(_exception_text(exc)))
        # Done: a $/cancel_request arriving from here on is ignored.
        self._forget(request_id)
        self._peer_cancelled.discard(request_id)
        self._reply(frame)
        await self._flow_control()

    def _forget(self, request_id: RequestId) -> None:
        entry = self._inflight.get(request_id)
        if entry is not None and entry[0] is asyncio.current_task():
            del self._inflight[request_id]

    def _answer_cancelled(self, request_id: RequestId, spec: MethodSpec | None) -> None:
        if self._closed:
            return
        if spec is not None and spec.cancelled is not None:
            # The method defines its own cancellation result (e.g. a `cancelled` outcome).
            self._reply(_result_frame(request_id, pydantic_core.to_json(spec.cancelled)))
        else:
            self._reply_error(request_id, RpcError(REQUEST_CANCELLED, "Request cancelled"))

    def _cancel_inbound(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not _is_id(request_id):
            logger.warning("%s without a valid requestId ignored", CANCEL_REQUEST_METHOD)
            return
        entry = self._inflight.get(request_id)
        if entry is None or entry[0].done():
            logger.debug("cancel for unknown or finished request %r ignored", request_id)
            return
        task, spec = entry
        coro = task.get_coro()
        if inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
            # Not started yet: its coroutine will never run, so the answer is given here.
            del self._inflight[request_id]
            task.cancel()
            self._answer_cancelled(request_id, spec)
            return
        self._peer_cancelled.add(request_id)
        task.cancel()

    # ------------------------------------------------------------------ inbound notifications

    def _handle_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST_METHOD:
            self._cancel_inbound(params)
        function: Callable[..., Awaitable[Any]] | None
        args: tuple[Any, ...]
        spec = self._inbound.get(method)
        if spec is not None:
            if spec.kind != "notification":
                logger.warning("request method %s received without an id; dropped", method)
                return
            function = getattr(self._handler, spec.handler, None)
            if function is None:
                logger.debug("no handler for notification %s; ignored", method)
                return
            try:
                value = self._validate_params(spec, params)
            except pydantic.ValidationError as exc:
                logger.warning("invalid params for notification %s dropped: %s", method, exc)
                return
            args = (value,)
        elif method.startswith("_") and method != CANCEL_REQUEST_METHOD:
            function = getattr(self._handler, "extension_notification", None)
            if function is None:
                logger.debug("extension notification %s ignored", method)
                return
            args = (method, params)
        else:
            if method != CANCEL_REQUEST_METHOD:
                logger.debug("unknown notification %s ignored", method)
            return
        try:
            key = self._order_key(method, params)
        except Exception:
            logger.exception("order_key failed for %s", method)
            key = SHARED_ORDER_KEY
        job = (method, function, args)
        if key is None:
            self._spawn_background(self._run_job(job))
            return
        queue = self._queues.get(key)
        if queue is not None:
            queue.append(job)
            waiter = self._idle.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(True)
            return
        queue = deque((job,))
        self._queues[key] = queue
        self._workers[key] = asyncio.create_task(self._drain_queue(key, queue))

    async def _drain_queue(self, key: Hashable, queue: deque[Job]) -> None:
        run = self._run_job
        loop = asyncio.get_running_loop()
        try:
            while True:
                while queue:
                    await run(queue.popleft())
                # Idle: wait for the next notification with this key (or retirement).
                if len(self._idle) >= _IDLE_WORKERS_MAX:
                    self._retire_oldest_idle()
                waiter: asyncio.Future[bool] = loop.create_future()
                self._idle[key] = waiter
                if not await waiter:
                    return
        finally:
            if self._idle.get(key) is not None and self._queues.get(key) is queue:
                del self._idle[key]
            if self._queues.get(key) is queue:
                del self._queues[key]
            if self._workers.get(key) is asyncio.current_task():
                del self._workers[key]

    def _retire_oldest_idle(self) -> None:
        key = next(iter(self._idle))
        waiter = self._idle.pop(key)
        # From now on the key has no queue: its next notification starts a new worker.
        self._queues.pop(key, None)
        self._workers.pop(key, None)
        if not waiter.done():
            waiter.set_result(False)

    @staticmethod
    async def _run_job(job: Job) -> None:
        method, function, args = job
        try:
            await function(*args)
        except NotImplementedError:
            logger.debug("notification %s not implemented; ignored", method)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            logger.exception("notification handler for %s raised CancelledError", method)
        except Exception:
            logger.exception("notification handler for %s failed", method)

    def _spawn_background(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
