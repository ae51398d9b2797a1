"""JSON-RPC 2.0 for the Agent Client Protocol: connections, their guarantees and their bounds.

Every message is one line of compact JSON, newline-terminated, over a byte stream (normally the
stdio of an agent subprocess). Nothing here varies with the schema: a generated package supplies the
method tables (``Mapping[str, MethodSpec]``) and handler objects. It depends only on the standard
library and pydantic v2.

The modules: ``framing`` (error codes and errors, method specs, frames), ``limits`` (``Limits``:
every bound and its default), ``connection`` (``Connection``, assembled from ``intake``,
``dispatch``, ``envelope``, ``outbound``, ``requests``, ``notifications``, ``ordering``, ``output``
and ``shutdown``), ``pipes`` (pipe and file streams), ``stdio`` (``connect_stdio``, ``serve_stdio``,
``spawn``), ``relay`` (a request sent on behalf of one being served, whose cancellation is passed on
and its answer still relayed), ``gone`` (``PeerGoneError`` and the peer leaving) and ``log``
(rate-limited logging of what a peer causes). Import from this package: the names below are its
surface, for users and the other sub-packages.

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
  Before that, work a handler asked the connection to hold (``Connection.hold``: a prompt turn)
  gets ``Limits.turn_timeout`` to finish (none on ``close()``), is then cancelled, and gets
  ``Limits.close_timeout`` to send its last messages while the output still works.
  Our requests still awaiting an answer fail with ``PeerGoneError`` (a ``ConnectionError``) at
  once (none can come). Work of the application's own that ends with that error unawaited is not
  reported as an error: the peer leaving is no failure of ours (``gone``).
* A response that cannot be parsed (not JSON, invalid UTF-8, cut short, a non-finite number,
  over the line limit) fails the request it answers with an ``RpcError`` saying so; when its id
  cannot be recovered (an error response with a null id included) it fails our only request
  awaiting an answer, if exactly one is, and is otherwise logged: give such requests a
  ``timeout`` (``Limits.request_timeout``). Responses are never answered.
* Non-finite numbers are refused on input (``1e999``: a parse error) and never written
  (``ValueError`` for our params, -32603 for a handler's result).
* Reading pauses, never drops, while ``Limits.max_queued_notifications`` notifications or
  ``Limits.max_inflight_requests`` requests are pending, or while our output is backed up. A
  peer that reads our output slower than ``Limits.min_drain_rate`` over
  ``Limits.write_stall_timeout`` (a peer that stopped reading) ends the connection; so does a
  peer that closes it (EPIPE): no further request runs, and our pending requests fail with a
  ``ConnectionError`` naming the reason. A slow reader gets everything.
* Errors sent to the peer carry no exception text: a handler's failure is -32603 without
  ``data``, a result of the wrong type too; only an ``RpcError`` raised on purpose carries its
  ``data``. What a peer can repeat at will is logged at a bounded rate (``log``).
"""

from __future__ import annotations

from .connection import Connection, ConnectionOptions
from .envelope import has_non_finite, is_request_id
from .framing import (
    CANCEL_REQUEST_METHOD,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SHARED_ORDER_KEY,
    MethodRow,
    MethodSpec,
    OrderKey,
    ReaderLike,
    RequestId,
    ResultValidationError,
    RpcError,
    WriterLike,
    default_order_key,
    encode_error,
    encode_message,
    handled_methods,
    method_table,
    to_jsonable,
    validate_value,
)
from .gone import PeerGoneError, quiet_when_peer_gone
from .limits import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_LINE_BYTES,
    LIMIT_TIMEOUT,
    READ_CHUNK,
    Limits,
    Timeout,
    timeout_block,
)
from .pipes import open_pipe_reader, open_pipe_writer, read_from_the_heap
from .relay import relay
from .stdio import connect_stdio, serve_stdio, spawn

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
    "READ_CHUNK",
    "REQUEST_CANCELLED",
    "SHARED_ORDER_KEY",
    "Connection",
    "ConnectionOptions",
    "Limits",
    "MethodRow",
    "MethodSpec",
    "OrderKey",
    "PeerGoneError",
    "ReaderLike",
    "RequestId",
    "ResultValidationError",
    "RpcError",
    "Timeout",
    "WriterLike",
    "connect_stdio",
    "default_order_key",
    "encode_error",
    "encode_message",
    "handled_methods",
    "has_non_finite",
    "is_request_id",
    "method_table",
    "open_pipe_reader",
    "open_pipe_writer",
    "quiet_when_peer_gone",
    "read_from_the_heap",
    "relay",
    "serve_stdio",
    "spawn",
    "timeout_block",
    "to_jsonable",
    "validate_value",
]
