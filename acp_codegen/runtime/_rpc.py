"""JSON-RPC 2.0 runtime for the Agent Client Protocol: its public names and its entry points.

Every message is one line of compact JSON, newline-terminated, over a byte stream (normally
the stdio of an agent subprocess). This module is generic: the generated package supplies the
method tables (``Mapping[str, MethodSpec]``) and handler objects. It depends only on the
standard library and pydantic v2.

This module owns the stdio and subprocess entry points (``connect_stdio``, ``serve_stdio``,
``spawn``) and re-exports the rest of the runtime: ``_rpc_framing`` (errors, method specs,
frames), ``_rpc_limits`` (``Limits``: every bound and its default), ``_rpc_connection``
(``Connection``, assembled from ``_rpc_intake``, ``_rpc_dispatch``, ``_rpc_outbound``,
``_rpc_requests``, ``_rpc_notifications``, ``_rpc_ordering`` and ``_rpc_output``) and
``_rpc_pipes`` (pipe and file streams). Import from here.

Ordering guarantees, per connection:

* Requests each run in their own task, so they are concurrent and may complete out of order.
* Notifications that share an order key (by default ``params["sessionId"]``, else one shared
  key) are handled strictly one after another in arrival order; different keys run concurrently.
  A notification handler must therefore not wait for a *later* message with the same key.
* A response to one of our requests reaches its caller only after every message received
  before it has been handled: the handlers of earlier notifications have finished, earlier
  requests have been dispatched (their handlers run on concurrently) and earlier errors
  answered. A client whose ``agent_message_chunk`` handler is slow has handled every chunk by
  the time ``session/prompt`` returns.
* No deadlock: the response to a request that a handler sends and awaits does not wait for that
  handler, nor for the notifications queued behind it under its order key. Any other wait of
  a handler on something that needs a later response is cut short after
  ``Limits.ordering_timeout`` (the response is then delivered, and a warning logged).

Nothing received is lost and nothing waits forever:

* At end of input every message already received is handled and every request answered, within
  ``Limits.shutdown_timeout``; requests still running then are cancelled and answered -32800.
  Our requests still awaiting an answer fail with ``ConnectionError`` at once (none can come).
* A response that cannot be parsed (not JSON, invalid UTF-8, cut short, a non-finite number,
  over the line limit) fails the request it answers with an ``RpcError`` saying so; when its id
  cannot be recovered (an error response with a null id included) it fails our only request
  awaiting an answer, if exactly one is, and is otherwise logged: give such requests a
  ``timeout`` (``Limits.request_timeout``). Responses are never answered.
* Non-finite numbers are refused on input (``1e999``: a parse error) and never written
  (``ValueError`` for our params, -32603 for a handler's result).
* Reading pauses, never drops, while ``Limits.max_queued_notifications`` notifications or
  ``Limits.max_inflight_requests`` requests are pending, or while our output is backed up. A
  peer that stops reading our output ends the connection after ``Limits.max_output_bytes`` or
  ``Limits.write_stall_timeout``; so does a peer that closes it (EPIPE): no further request
  runs, and our pending requests fail with a ``ConnectionError`` naming the reason.
* Errors sent to the peer carry no exception text: a handler's failure is -32603 without
  ``data``, a result of the wrong type too; only an ``RpcError`` raised on purpose carries its
  ``data``. What a peer can repeat at will is logged at a bounded rate (``_rpc_log``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from os import PathLike

from ._rpc_connection import Connection
from ._rpc_framing import (
    CANCEL_REQUEST_METHOD,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SHARED_ORDER_KEY,
    MethodSpec,
    OrderKey,
    ReaderLike,
    RequestId,
    ResultValidationError,
    RpcError,
    WriterLike,
    _frame,
    _notification_frame,
    _request_frame,
    _result_frame,
    _to_json,
    default_order_key,
    to_jsonable,
)
from ._rpc_limits import (
    _IDLE_WORKERS_MAX,
    _READ_CHUNK,
    DEFAULT_LIMITS,
    DEFAULT_MAX_LINE_BYTES,
    LIMIT_TIMEOUT,
    Limits,
    Timeout,
)
from ._rpc_pipes import _open_reader, _open_writer, _PipeReader

# Besides `__all__`, the private names imported above that this module does not use itself
# (`_frame`, `_to_json`, `_READ_CHUNK`, ...) stay importable from here for tests and benchmarks.

__all__ = [
    "CANCEL_REQUEST_METHOD",
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_LINE_BYTES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LIMIT_TIMEOUT",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SHARED_ORDER_KEY",
    "Connection",
    "Limits",
    "MethodSpec",
    "OrderKey",
    "ReaderLike",
    "RequestId",
    "ResultValidationError",
    "RpcError",
    "Timeout",
    "WriterLike",
    "connect_stdio",
    "default_order_key",
    "serve_stdio",
    "spawn",
    "to_jsonable",
]


async def connect_stdio(
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    max_line_bytes: int | None = None,
    order_key: OrderKey = default_order_key,
    limits: Limits | None = None,
) -> Connection:
    """Connect over this process's stdin and stdout (call ``run()`` on the result)."""
    reader = await _open_reader(sys.stdin.buffer)
    writer = await _open_writer(sys.stdout.buffer)
    return Connection(
        handler,
        inbound,
        reader,
        writer,
        max_line_bytes=max_line_bytes,
        order_key=order_key,
        limits=limits,
    )


async def serve_stdio(
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    max_line_bytes: int | None = None,
    order_key: OrderKey = default_order_key,
    limits: Limits | None = None,
) -> None:
    """Serve ``handler`` over stdin/stdout until EOF."""
    connection = await connect_stdio(
        handler, inbound, max_line_bytes=max_line_bytes, order_key=order_key, limits=limits
    )
    await connection.run()


async def spawn(
    command: Sequence[str],
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | PathLike[str] | None = None,
    max_line_bytes: int | None = None,
    order_key: OrderKey = default_order_key,
    limits: Limits | None = None,
) -> tuple[Connection, asyncio.subprocess.Process]:
    """Start ``command`` with piped stdin/stdout (stderr inherited) and connect to it.

    The connection reads the child's stdout through a pipe of its own, so ``process.stdout`` is
    None; ``process.stdin`` is the connection's writer (closing it is EOF for the child).
    """
    if not command:
        raise ValueError("command must not be empty")
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            command[0],
            *command[1:],
            stdin=asyncio.subprocess.PIPE,
            stdout=write_fd,
            env=env,
            cwd=cwd,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child has its copy: EOF arrives when the child's is closed
    reader = _PipeReader()
    pipe = os.fdopen(read_fd, "rb", 0)
    try:
        await loop.connect_read_pipe(lambda: reader, pipe)
    except BaseException:
        pipe.close()
        raise
    if process.stdin is None:  # pragma: no cover
        raise RuntimeError("subprocess stdin pipe is missing")
    connection = Connection(
        handler,
        inbound,
        reader,
        process.stdin,
        max_line_bytes=max_line_bytes,
        order_key=order_key,
        limits=limits,
    )
    return connection, process
