"""JSON-RPC over this process's stdio or a child's: ``connect_stdio``, ``serve_stdio`` and ``spawn``
(the ``Connection`` of each reads and writes pipes, see ``pipes``)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from os import PathLike

from .connection import Connection
from .framing import (
    MethodSpec,
    OrderKey,
    default_order_key,
)
from .limits import (
    Limits,
)
from .pipes import _PipeReader, open_pipe_reader, open_pipe_writer

__all__ = ["connect_stdio", "serve_stdio", "spawn"]


async def connect_stdio(
    handler: object,
    inbound: Mapping[str, MethodSpec],
    *,
    max_line_bytes: int | None = None,
    order_key: OrderKey = default_order_key,
    limits: Limits | None = None,
) -> Connection:
    """Connect over this process's stdin and stdout (call ``run()`` on the result)."""
    reader = await open_pipe_reader(sys.stdin.buffer)
    writer = await open_pipe_writer(sys.stdout.buffer)
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
