"""JSON-RPC 2.0 runtime, bounds: every limit of a connection and its default, in one place.

``Limits`` is what a caller may tune (``Connection(..., limits=Limits(...))`` and the stdio
entry points take it); the module constants below it are internal sizes that only bound memory.
What happens when a limit is reached is part of each field's documentation: nothing received is
ever dropped because of a limit, reading pauses instead, and every wait has a time bound.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

DEFAULT_MAX_LINE_BYTES: Final = 50 * 1024 * 1024


class _LimitDefault(enum.Enum):
    TOKEN = "the connection's Limits.request_timeout"


LIMIT_TIMEOUT: Final = _LimitDefault.TOKEN
"""A request's ``timeout`` when none is given: the connection's ``Limits.request_timeout``
(``None`` instead means no time limit for that request)."""

Timeout = float | None | Literal[_LimitDefault.TOKEN]

# The time limits `timeout_block` sets, by connection (the object itself, compared by identity):
# a copy per block, so nested blocks and concurrent tasks never see each other's.
_BLOCK_TIMEOUTS: ContextVar[Mapping[object, float | None]] = ContextVar(
    "acp_block_timeouts", default=MappingProxyType({})
)


@contextmanager
def timeout_block(connection: object, seconds: float | None) -> Iterator[None]:
    """Within the block (in this task and the tasks it starts), `connection`'s requests sent
    without their own `timeout=` wait at most `seconds` (None: no limit) instead of
    `Limits.request_timeout`."""
    if seconds is not None and not seconds > 0:  # NaN too
        raise ValueError("a request timeout must be positive or None")
    token = _BLOCK_TIMEOUTS.set(MappingProxyType({**_BLOCK_TIMEOUTS.get(), connection: seconds}))
    try:
        yield
    finally:
        _BLOCK_TIMEOUTS.reset(token)


def outside_blocks(connection: object) -> None:
    """Forget, in the current task (and those it starts), the blocks' limits for `connection`:
    a connection's read loop started inside a block must not pass it to every handler."""
    blocks = _BLOCK_TIMEOUTS.get()
    if connection in blocks:
        _BLOCK_TIMEOUTS.set(
            MappingProxyType({c: t for c, t in blocks.items() if c is not connection})
        )


def request_limit(connection: object, timeout: Timeout, default: float | None) -> float | None:
    """The time limit of one request: its own `timeout`, else the innermost `timeout_block`'s
    for its connection, else `default` (`Limits.request_timeout`)."""
    if timeout is not LIMIT_TIMEOUT:
        return timeout
    return _BLOCK_TIMEOUTS.get().get(connection, default)


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one connection (all sizes in bytes, all times in seconds)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """Longest inbound line. A longer one is discarded while it streams in (never buffered
    whole) and answered -32600 "Frame too large" (with its id when the start of the line shows
    it); a response that long fails the request it answers."""

    max_id_chars: int = 256
    """Longest string id accepted; integer ids must fit in a signed 64-bit integer. Other ids
    are answered -32600 with a null id."""

    max_queued_notifications: int = 1000
    """Inbound notifications received but not yet handled. At the limit reading pauses until
    handlers catch up. While one of our handlers awaits a response from the peer (which may be
    behind the backlog) reading goes on, up to ``overflow_factor`` times the limit."""

    max_inflight_requests: int = 256
    """Inbound requests being served at once; at the limit reading pauses (same exception and
    overflow bound as for notifications)."""

    overflow_factor: int = 4
    """Past ``overflow_factor`` times either limit above (only reachable while a handler awaits
    a response) the connection closes with a logged reason instead of deadlocking."""

    max_output_bytes: int = 64 * 1024 * 1024
    """Output buffered before our requests and notifications wait to be written (the answers
    of the peer's requests are bounded by ``max_inflight_requests``). Not a reason to close: a
    peer that reads, however slowly (see ``min_drain_rate``), gets everything."""

    write_stall_timeout: float = 30.0
    """The window over which the peer's reading is measured: while our output waits for it, a
    peer that takes less than ``min_drain_rate`` bytes a second over this long (nothing at all,
    for a writer that does not report its buffer) ends the connection with a logged reason, and
    our pending requests fail with ``ConnectionError``."""

    min_drain_rate: int = 32 * 1024
    """Bytes a second the peer must read of our waiting output (see ``write_stall_timeout``):
    what tells a slow reader, whose output is all delivered, from one that stopped reading (0:
    none is ever cut, our writers wait for as long as it takes)."""

    request_timeout: float | None = None
    """Default time limit of our outbound requests (``TimeoutError``, and ``$/cancel_request``
    to the peer); ``request(..., timeout=)`` and, for every request sent inside it, a
    ``with peer.request_timeout(seconds):`` block override it. None: no limit (a prompt turn may
    legitimately run for hours)."""

    ordering_timeout: float = 30.0
    """How long a response may wait for the handlers of notifications received before it (the
    ordering guarantee of ``jsonrpc``). Past it the response is delivered anyway, with a warning:
    a handler waiting for something that only happens after the response cannot deadlock."""

    shutdown_timeout: float = 10.0
    """At end of input: how long handlers get to finish the messages already received. Then
    requests still running are cancelled and answered -32800, notifications still queued are
    dropped with a logged count."""

    turn_timeout: float = 10.0
    """At end of input or ``close()``: how long the work the connection holds open
    (``Connection.hold``: the prompt turns of ``acp_runtime.lifecycle``) may go on. At end of
    input a turn gets this long to finish, then it is cancelled; ``close()`` cancels it at once.
    A cancelled turn then gets ``close_timeout`` to send its final updates (v2's ``idle``, v1's
    answer) before the output closes."""

    close_timeout: float = 5.0
    """How long ``close()`` (and the last step of any shutdown) waits for cancelled handlers to
    end and for the output to be flushed before the transport is aborted."""

    def __post_init__(self) -> None:
        for name in ("max_line_bytes", "max_id_chars", "max_queued_notifications"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.max_inflight_requests <= 0 or self.max_output_bytes <= 0:
            raise ValueError("max_inflight_requests and max_output_bytes must be positive")
        if self.min_drain_rate < 0:
            raise ValueError("min_drain_rate must not be negative")
        if self.overflow_factor < 1:
            raise ValueError("overflow_factor must be at least 1")
        timeouts = (self.write_stall_timeout, self.ordering_timeout, self.shutdown_timeout)
        if min(*timeouts, self.turn_timeout, self.close_timeout) < 0:
            raise ValueError("timeouts must not be negative")
        if self.request_timeout is not None and self.request_timeout <= 0:
            raise ValueError("request_timeout must be positive or None")

    def inbound(
        self, queued: int, serving: int, awaited: bool
    ) -> Literal["read", "pause", "overflow"]:
        """Whether to read on with ``queued`` notifications and ``serving`` requests pending
        (``awaited``: a handler awaits a response from the peer)."""
        if queued < self.max_queued_notifications and serving < self.max_inflight_requests:
            return "read"
        if not awaited:
            return "pause"  # handlers make progress without reading: wait for them
        factor = self.overflow_factor
        if queued >= factor * self.max_queued_notifications or (
            serving >= factor * self.max_inflight_requests
        ):
            return "overflow"
        return "read"  # the awaited response may be behind the backlog: read on


DEFAULT_LIMITS: Final = Limits()

# Bytes asked of the reader per read; also the StreamReader limit (a flow-control window only:
# line framing is done here, so a line may be far longer than this).
READ_CHUNK: Final = 256 * 1024
# How much of an oversized or unparseable line is kept to recover its id for the error answer.
_SNIFF_BYTES: Final = 4096
# Cancelled outbound request ids remembered to silence their late answers (then forgotten).
_ABANDONED_MAX: Final = 1024
# Notification workers kept waiting for more messages of their order key (per connection).
_IDLE_WORKERS_MAX: Final = 64
# Log lines a peer can cause, per kind of event and per window (the rest is counted, see
# `jsonrpc.log`).
_LOG_BURST: Final = 5
_LOG_WINDOW: Final = 60.0
