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

Liberal in what it accepts: an answer numbered with another version whose body is v1's (v1's
``agentCapabilities`` / ``agentInfo`` and none of v2's ``info`` / ``capabilities``, as agents
that echo the requested version send) continues in v1 when the client speaks v1, with one
warning (logged on ``acp_runtime.versions`` and kept in ``Negotiated.warnings``): the body is
what the agent will speak, the number is an echo. Everything the client sends stays strict.

The ``initialize`` on the wire is exactly the newest version's params. Older versions' fields
(v1's ``clientInfo``) are not added: the newest schema defines no such root fields, and the
extensibility rules forbid custom ones (``check-transcript`` flags them). An agent that downgrades
maps what it understands (the version router turns v2's ``info`` into v1's ``clientInfo``), and
v1's ``clientInfo`` is optional. Its id is the string ``"initialize"``, so it never collides
with the ids the connection numbers from 0.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Generic, TypeVar, Unpack

import pydantic
import pydantic_core

from ..jsonrpc import (
    DEFAULT_LIMITS,
    Connection,
    ConnectionOptions,
    ReaderLike,
    RpcError,
    WriterLike,
    encode_message,
    to_jsonable,
    validate_value,
)
from ..models import AcpModel
from ..peers import ClientHandler, PeerBase
from .lines import LineReader, supported_text, write_frame

P = TypeVar("P", bound=PeerBase)
"""The agent peers of the versions a client is given (each version's package's `AgentPeer`)."""

InitializeParams = AcpModel | Mapping[str, object]
"""One version's `InitializeRequest`: the model, or its wire form."""

INITIALIZE_ID = "initialize"
V1_ONLY_KEYS = frozenset({"agentCapabilities", "agentInfo"})
"""Root keys of v1's ``InitializeResponse`` that v2 renamed."""
V2_ONLY_KEYS = frozenset({"info", "capabilities"})
"""Root keys of v2's ``InitializeResponse`` (``info`` is required there)."""

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.versions


class UnsupportedVersionError(ConnectionError):
    """The agent answered ``initialize`` with a protocol version this client has no bindings for."""

    def __init__(self, version: object, supported: Sequence[int]) -> None:
        super().__init__(
            f"the agent speaks ACP protocol version {version!r}, but this client only has bindings "
            f"for {supported_text(dict.fromkeys(supported))}; closing the connection"
        )
        self.version = version
        self.supported = tuple(supported)


@dataclass(frozen=True)
class Negotiated(Generic[P]):
    """A connection in the negotiated version: the client of that version, its package's typed
    peer and ``InitializeResponse``, and the ``Connection`` (narrow ``peer`` and ``response``
    with ``isinstance``, or read ``version``)."""

    version: int
    client: ClientHandler[P]
    peer: P
    response: AcpModel
    connection: Connection
    warnings: tuple[str, ...] = ()
    """What was accepted although the agent got it wrong (a v1 body under another number)."""


def _wire_params(offers: Mapping[int, InitializeParams]) -> dict[str, Any]:
    wire = {version: to_jsonable(offer) for version, offer in sorted(offers.items())}
    for version, params in wire.items():
        if not isinstance(params, dict):
            raise TypeError(f"initialize params for version {version} must be an object")
    newest = max(wire)
    return {**wire[newest], "protocolVersion": newest}


async def negotiate(
    reader: ReaderLike,
    writer: WriterLike,
    clients: Mapping[int, ClientHandler[P]],
    initialize: Mapping[int, InitializeParams],
    **options: Unpack[ConnectionOptions],
) -> Negotiated[P]:
    """Initialize over ``reader``/``writer`` and continue in the agent's version (see module doc).

    ``clients`` maps each version to a ``Client`` of that version's package; ``initialize`` maps
    the same versions to their ``InitializeRequest`` (a model or its wire form); ``options`` go to
    the ``Connection`` (its ``max_line_bytes``, or its ``limits``' one, also bounds the lines
    read before the answer). The returned connection is not running yet: call ``run()`` or use
    ``async with``. An error answer raises ``RpcError``, an unknown version
    ``UnsupportedVersionError``, end of stream ``ConnectionError`` (the writer is closed in each
    case).
    """
    max_line_bytes = (
        options.get("max_line_bytes") or (options.get("limits") or DEFAULT_LIMITS).max_line_bytes
    )
    if not clients or set(clients) != set(initialize):
        raise ValueError(
            "give a client and initialize params for the same, non-empty set of versions"
        )
    frame = encode_message(
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
            warnings: tuple[str, ...] = ()
            if answered != 1 and 1 in clients and is_v1_body(result):
                warning = (
                    f"the agent answered initialize with protocolVersion {answered!r} but a v1 "
                    "body (agentCapabilities/agentInfo, no info); continuing in protocol version 1"
                )
                logger.warning("%s", warning)
                warnings = (warning,)
                answered = 1
            if (
                not isinstance(answered, int)
                or isinstance(answered, bool)
                or answered not in clients
            ):
                raise UnsupportedVersionError(answered, sorted(clients))
            version: int = answered
            break
    except BaseException:
        writer.close()
        raise
    client = clients[version]
    spec = client.binding.agent_methods["initialize"]
    try:
        response = validate_value(spec.result, result)
        if not isinstance(response, AcpModel):
            raise TypeError(f"the bindings of version {version} type no initialize answer")
    except (pydantic.ValidationError, TypeError) as exc:
        writer.close()
        raise RpcError(
            -32603, f"invalid initialize answer for protocol version {version}", str(exc)
        ) from exc
    connection = Connection(
        client, client.inbound_methods, lines.rest(bytes(early)), writer, **options
    )
    peer = client.attach(connection)
    return Negotiated(version, client, peer, response, connection, warnings)


def is_v1_body(result: object) -> bool:
    """Whether an ``initialize`` result is shaped as v1's (whatever version number it carries)."""
    return (
        isinstance(result, dict)
        and bool(V1_ONLY_KEYS & result.keys())
        and not V2_ONLY_KEYS & result.keys()
    )


async def spawn_negotiated(
    command: Sequence[str],
    clients: Mapping[int, ClientHandler[P]],
    initialize: Mapping[int, InitializeParams],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | PathLike[str] | None = None,
    **options: Unpack[ConnectionOptions],
) -> tuple[Negotiated[P], asyncio.subprocess.Process]:
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


__all__ = ["Negotiated", "UnsupportedVersionError", "is_v1_body", "negotiate", "spawn_negotiated"]
