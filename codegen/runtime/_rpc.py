"""JSON-RPC 2.0 runtime for the Agent Client Protocol: its public names and its entry points.

Every message is one line of compact JSON, newline-terminated, over a byte stream (normally
the stdio of an agent subprocess). This module is generic: the generated package supplies the
method tables (``Mapping[str, MethodSpec]``) and handler objects. It depends only on the
standard library and pydantic v2.

This module owns the stdio and subprocess entry points (``connect_stdio``, ``serve_stdio``,
``spawn``) and re-exports the rest of the runtime, which lives in ``_rpc_framing`` (errors,
method specs, framing), ``_rpc_pipes`` (pipe and file streams) and ``_rpc_connection``
(``Connection``): import from here.

Ordering guarantees (inbound side):

* Requests each run in their own task, so they are concurrent and may complete out of order.
* Notifications that share an order key (by default ``params["sessionId"]``, else one shared
  key) are handled strictly one after another in arrival order; different keys run concurrently.
  A notification handler must therefore not wait for a *later* message with the same key.
* Responses to our own requests resolve the awaiting caller immediately; they do not wait for
  notifications that arrived earlier (waiting could deadlock a notification handler that awaits
  the caller).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from os import PathLike

from ._rpc_connection import Connection
from ._rpc_framing import (
    _IDLE_WORKERS_MAX,
    _READ_CHUNK,
    CANCEL_REQUEST_METHOD,
    DEFAULT_MAX_LINE_BYTES,
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
from ._rpc_pipes import _open_reader, _open_writer, _PipeReader

# Besides `__all__`, the private names imported above that this module does not use itself
# (`_frame`, `_to_json`, `_READ_CHUNK`, ...) stay importable from here for tests and benchmarks.

__all__ = [
    "CANCEL_REQUEST_METHOD",
    "DEFAULT_MAX_LINE_BYTES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SHARED_ORDER_KEY",
    "Connection",
    "MethodSpec",
    "OrderKey",
    "ReaderLike",
    "RequestId",
    "ResultValidationError",
    "RpcError",
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
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    order_key: OrderKey = default_order_key,
) -> Connection:
    """Connect over this process's stdin and stdout (call ``run()`` on the result)."""
    reader = await _open_reader(sys.stdin.buffer)
    writer = await _open_writer(sys.stdout.buffer)
    return Connection(
        handler, inbound, reader, writer, max_line_bytes=max_line_bytes, order_key=order_key
    )


async def serve_stdio(
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    order_key: OrderKey = default_order_key,
) -> None:
    """Serve ``handler`` over stdin/stdout until EOF."""
    connection = await connect_stdio(
        handler, inbound, max_line_bytes=max_line_bytes, order_key=order_key
    )
    await connection.run()


async def spawn(
    command: Sequence[str],
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | PathLike[str] | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    order_key: OrderKey = default_order_key,
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
    )
    return connection, process
