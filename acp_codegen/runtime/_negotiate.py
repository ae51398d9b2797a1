"""Client side of several protocol versions: ``negotiate``, ``spawn_negotiated``, ``Negotiated``.

The client offers one ``Client`` handler (and its ``InitializeRequest``) per version it has
bindings for. It sends a single ``initialize`` asking for the newest of them, reads the answer
itself, and continues in whatever version the agent answers with: the answer is validated by that
version's package, and that package's ``Connection`` takes over the stream (replaying whatever the
agent sent after its answer). The result is a version-specific handle: ``peer`` is that package's
typed ``AgentPeer`` and ``response`` its ``InitializeResponse`` (narrow with ``isinstance`` or
``version``). An answer in a version without bindings closes the connection with
``UnsupportedVersionError`` (the spec's "the client SHOULD close the connection and inform the
user").

The ``initialize`` on the wire is exactly the newest version's params. Older versions' fields
(v1's ``clientInfo``) are not added: the newest schema defines no such root fields, and the
extensibility rules forbid custom ones (``check-transcript`` flags them). An agent that downgrades
maps what it understands (the version router turns v2's ``info`` into v1's ``clientInfo``), and
v1's ``clientInfo`` is optional. Its id is the string ``"initialize"``, so it never collides
with the ids the connection numbers from 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any

import pydantic
import pydantic_core

from ._rpc_framing import (
    ReaderLike,
    RpcError,
    WriterLike,
    _frame,
    _validate,
    to_jsonable,
)
from ._rpc_limits import DEFAULT_MAX_LINE_BYTES
from ._versions import LineReader, binding_of, supported_text, write_frame

INITIALIZE_ID = "initialize"


class UnsupportedVersionError(ConnectionError):
    """The agent answered ``initialize`` with a protocol version this client has no bindings for."""

    def __init__(self, version: Any, supported: Sequence[int]) -> None:
        super().__init__(
            f"the agent speaks ACP protocol version {version!r}, but this client only has bindings "
            f"for {supported_text(dict.fromkeys(supported))}; closing the connection"
        )
        self.version = version
        self.supported = tuple(supported)


@dataclass(frozen=True)
class Negotiated:
    """A connection in the negotiated version: that package's peer, answer and ``Connection``."""

    version: int
    client: Any
    peer: Any
    response: Any
    connection: Any


def _wire_params(offers: Mapping[int, Any]) -> dict[str, Any]:
    wire = {version: to_jsonable(offer) for version, offer in sorted(offers.items())}
    for version, params in wire.items():
        if not isinstance(params, dict):
            raise TypeError(f"initialize params for version {version} must be an object")
    newest = max(wire)
    return {**wire[newest], "protocolVersion": newest}


async def negotiate(
    reader: ReaderLike,
    writer: WriterLike,
    clients: Mapping[int, object],
    initialize: Mapping[int, Any],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    **options: Any,
) -> Negotiated:
    """Initialize over ``reader``/``writer`` and continue in the agent's version (see module doc).

    ``clients`` maps each version to a ``Client`` of that version's package; ``initialize`` maps
    the same versions to their ``InitializeRequest`` (a model or its wire form). The returned
    connection is not running yet: call ``run()`` or use ``async with``. An error answer raises
    ``RpcError``, an unknown version ``UnsupportedVersionError``, end of stream ``ConnectionError``
    (the writer is closed in each case).
    """
    if not clients or set(clients) != set(initialize):
        raise ValueError(
            "give a client and initialize params for the same, non-empty set of versions"
        )
    frame = _frame(
        {
            "jsonrpc": "2.0",
            "id": INITIALIZE_ID,
            "method": "initialize",
            "params": _wire_params(initialize),
        }
    )
    lines = LineReader(reader, max_line_bytes)
    early = bytearray()  # what the agent sent before its answer, for the connection to handle
    try:
        await write_frame(writer, frame)
        while True:
            try:
                line = await lines.readline()
            except EOFError:
                raise ConnectionError(
                    "the agent closed the connection before answering initialize"
                ) from None
            if line is None:
                continue
            try:
                message = pydantic_core.from_json(line)
            except ValueError:
                message = None
            if not (
                isinstance(message, dict)
                and "method" not in message
                and message.get("id") == INITIALIZE_ID
            ):
                if len(early) + len(line) <= max_line_bytes:
                    early += line + b"\n"
                continue
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                raise RpcError(
                    int(error.get("code", -32603)),
                    str(error.get("message", "initialize failed")),
                    error.get("data"),
                )
            result = message.get("result")
            answered = result.get("protocolVersion") if isinstance(result, dict) else None
            if not isinstance(answered, int) or answered not in clients:
                raise UnsupportedVersionError(answered, sorted(clients))
            version: int = answered
            break
    except BaseException:
        writer.close()
        raise
    client = clients[version]
    binding = binding_of(client)
    spec = binding.AGENT_METHODS["initialize"]
    try:
        response = result if spec.result is None else _validate(spec.result, result)
    except pydantic.ValidationError as exc:
        writer.close()
        raise RpcError(
            -32603, f"invalid initialize answer for protocol version {version}", str(exc)
        ) from exc
    connection = binding.Connection(
        client, binding.CLIENT_METHODS, lines.rest(bytes(early)), writer, **options
    )
    peer = binding.AgentPeer(connection)
    client.peer = peer  # type: ignore[attr-defined]
    return Negotiated(version, client, peer, response, connection)


async def spawn_negotiated(
    command: Sequence[str],
    clients: Mapping[int, object],
    initialize: Mapping[int, Any],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | PathLike[str] | None = None,
    **options: Any,
) -> tuple[Negotiated, asyncio.subprocess.Process]:
    """Start an agent command (stderr inherited) and ``negotiate`` with it over its stdio."""
    if not command:
        raise ValueError("command must not be empty")
    process = await asyncio.create_subprocess_exec(
        command[0],
        *command[1:],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        negotiated = await negotiate(process.stdout, process.stdin, clients, initialize, **options)
    except BaseException:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        raise
    return negotiated, process


__all__ = ["Negotiated", "UnsupportedVersionError", "negotiate", "spawn_negotiated"]
