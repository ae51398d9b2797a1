"""Remote ACP transport, client side: the Streamable HTTP ``WriterLike`` and its SSE readers.

Owns ``HttpSink`` (POSTs the connection's messages in order, opens the connection-scoped SSE
stream after ``initialize`` and a session-scoped one before a session's first message or when a
response names a new session, answers an HTTP failure with a JSON-RPC error for the request it
carried, and DELETEs the connection on close) and ``RemoteHttpError``, one clear error per
failure status. What the agent sends is read under ``ClientLimits`` (``client_read``): bodies,
error bodies and SSE lines are bounded, and so is the number of session streams open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pydantic_core

from .client_read import ClientLimitError, read_body, read_start, sse_data
from .limits import (
    CONNECTION_ROUTED_METHODS,
    EVENT_STREAM_MIME,
    HEADER_CONNECTION_ID,
    HEADER_SESSION_ID,
    INITIALIZE_METHOD,
    JSON_MIME,
    ClientLimits,
    RemoteLimits,
    is_response,
    message_id,
    params_session_id,
    parse_message,
    result_session_id,
)
from .pipes import ByteBound, InboundPipe, QueuedSink

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote

STATUS_MEANING = {
    400: (
        "the server refused the request (missing or mismatched Acp-Connection-Id or "
        "Acp-Session-Id, or bad JSON)"
    ),
    401: "authentication required: the server refused these credentials",
    403: "forbidden: the server refused this Origin or these credentials",
    404: (
        "unknown connection or session: the server does not have it (it closed or is another "
        "client's)"
    ),
    405: "the endpoint does not accept this method",
    406: "the server requires Accept: text/event-stream",
    409: "this stream already has a receiver",
    410: "the connection is gone",
    413: "the message is larger than the server accepts",
    415: "the server requires Content-Type: application/json",
    429: "too many session streams on this connection",
    501: "not supported by the server (JSON-RPC batches)",
    503: "the server is at capacity (too many connections)",
}
# Statuses after which the connection cannot be used any more (as the reference client).
FATAL_STATUSES = frozenset({401, 403, 404, 410})
MAX_ERROR_BODY = 8 * 1024


def _one_line(text: str) -> str:
    """The agent's text for a log line: control characters (line breaks, escape sequences)
    written as escapes, so that it can neither forge lines nor act on a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class RemoteHttpError(ConnectionError):
    """An ACP endpoint answered an HTTP request with a failure status."""

    def __init__(self, method: str, url: str, status: int, body: bytes) -> None:
        self.method = method
        self.url = url
        self.status = status
        self.body = body[:MAX_ERROR_BODY].decode("utf-8", "replace")
        meaning = STATUS_MEANING.get(status, "unexpected status")
        shown = _one_line(self.body.strip())
        detail = f": {shown}" if shown else ""
        super().__init__(f"{method} {url}: HTTP {status}, {meaning}{detail}")

    def to_rpc_error(self, request_id: Any) -> bytes:
        """The JSON-RPC error frame that fails the request this HTTP request carried."""
        error = {
            "code": -32603,
            "message": str(self),
            "data": {"status": self.status, "body": self.body},
        }
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "error": error}) + b"\n"


class HttpSink(QueuedSink):
    """The ``WriterLike`` of a Streamable HTTP connection."""

    def __init__(
        self,
        client: Any,
        url: str,
        pipe: InboundPipe,
        bound: ByteBound,
        limits: RemoteLimits,
        client_limits: ClientLimits,
    ) -> None:
        self._client = client
        self._url = url
        self._pipe = pipe
        self._limits = limits
        self._client_limits = client_limits
        self._unopened = 0  # sessions named past max_session_streams (logged once)
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._ready: dict[str | None, asyncio.Future[None]] = {}
        self._server_requests: dict[Any, str] = {}  # id of a server request -> its session
        self._awaiting: dict[Any, str] = {}  # id of our request -> the session stream to answer
        self._closing = False
        self._closed: asyncio.Future[None] | None = None
        super().__init__(bound)

    # ------------------------------------------------------------------ closing

    async def wait_closed(self) -> None:
        """DELETE the connection, end the streams and the HTTP client (once, however often called).

        The connection's output watcher and its ``close()`` both wait here: a second DELETE
        racing the first would open a socket after the client closed, and leak it."""
        if self._closed is None:
            self._closed = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closed)

    async def _close(self) -> None:
        await asyncio.wait([self._sender])
        self._closing = True
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await self._client.delete(
                    self._url, headers={HEADER_CONNECTION_ID: self.connection_id}
                )
        for task in self._streams.values():
            task.cancel()
        if self._streams:
            await asyncio.wait(list(self._streams.values()))
        await self._client.aclose()
        self._pipe.feed_eof()

    # ------------------------------------------------------------------ posting

    async def _send_all(self) -> None:
        import httpx

        try:
            while (data := await self._next()) is not None:
                for line in data.splitlines():
                    if not await self._post(line):
                        return
        except (httpx.HTTPError, OSError) as exc:  # ConnectionError and RemoteHttpError too
            logger.warning("ACP HTTP connection failed: %s", exc)
        finally:
            if not self._closing:
                self._pipe.feed_eof()

    async def _post(self, line: bytes) -> bool:
        """POST one message; False when the connection is unusable from now on."""
        import httpx

        message = parse_message(line) or {}
        headers = {"Content-Type": JSON_MIME, "Accept": JSON_MIME}
        if self.connection_id is None and message.get("method") != INITIALIZE_METHOD:
            raise ConnectionError("the first message of an ACP HTTP connection must be initialize")
        session_id = None
        if self.connection_id is not None:
            headers[HEADER_CONNECTION_ID] = self.connection_id
            session_id = params_session_id(message)
            if session_id is None and is_response(message):
                session_id = self._server_requests.pop(message_id(message), None)
            if session_id is not None:
                headers[HEADER_SESSION_ID] = session_id
                refused = await self._open(session_id)
                if refused is not None:
                    return self._fail(message, refused)
        request_id = message_id(message) if "method" in message else None
        if (
            request_id is not None
            and session_id is not None
            and message.get("method") not in CONNECTION_ROUTED_METHODS
        ):
            self._awaiting[request_id] = session_id
        limits = self._client_limits
        try:
            return await self._exchange(message, line, headers, request_id)
        except httpx.TimeoutException:
            self._awaiting.pop(request_id, None)
            self._fail(
                message,
                ClientLimitError(
                    f"POST {self._url}: no answer within {limits.request_timeout:g} s",
                    "request_timeout",
                ),
            )
            return False  # whether the agent got the message is unknown: the connection ends

    async def _exchange(
        self, message: dict[str, Any], line: bytes, headers: dict[str, str], request_id: Any
    ) -> bool:
        limits = self._client_limits
        async with self._client.stream("POST", self._url, content=line, headers=headers) as got:
            if got.status_code >= 300:
                self._awaiting.pop(request_id, None)
                body = await read_start(got, limits.max_error_body_bytes)
                return self._fail(
                    message, RemoteHttpError("POST", self._url, got.status_code, body)
                )
            if self.connection_id is not None:
                return True  # the answer comes on a stream; a body here is not read
            connection_id = got.headers.get(HEADER_CONNECTION_ID)
            if not connection_id:
                raise ConnectionError("ACP initialize response has no Acp-Connection-Id")
            try:
                body = await read_body(got, limits.max_message_bytes, "the initialize response")
            except ClientLimitError as exc:
                self._fail(message, exc)
                return False
        self.connection_id = connection_id
        self._feed(body)
        refused = await self._open(None)
        if refused is not None:
            raise refused
        return True

    def _fail(self, message: dict[str, Any], error: RemoteHttpError | ClientLimitError) -> bool:
        logger.warning("%s", error)
        if "method" in message and message_id(message) is not None:
            self._pipe.feed(error.to_rpc_error(message_id(message)))
        if isinstance(error, ClientLimitError):
            return self.connection_id is not None  # this message fails, the connection holds
        # An unknown session fails its request only; anything else in FATAL_STATUSES means the
        # connection itself is gone or refused.
        session_only = error.status == 404 and "Acp-Session-Id" in error.body
        return self.connection_id is not None and (
            session_only or error.status not in FATAL_STATUSES
        )

    def _feed(self, data: bytes) -> None:
        message = parse_message(data)
        if message is not None:
            if is_response(message):
                self._awaiting.pop(message_id(message), None)
            created = result_session_id(message) if is_response(message) else None
            if created is not None and created not in self._streams:
                if self._room_for(created, evict=False):
                    self._start_stream(created)
                else:
                    self._unopened += 1
                    log = logger.warning if self._unopened == 1 else logger.debug
                    log(
                        "session %.80r: no stream opened, %d are (ClientLimits."
                        "max_session_streams)",
                        created,
                        self._client_limits.max_session_streams,
                    )
        self._pipe.feed(data.replace(b"\n", b" ") + b"\n")

    # ------------------------------------------------------------------ SSE streams

    def _start_stream(self, session_id: str | None) -> asyncio.Future[None]:
        ready = self._ready.get(session_id)
        if ready is None:
            ready = self._ready[session_id] = asyncio.get_running_loop().create_future()
            self._streams[session_id] = asyncio.ensure_future(self._listen(session_id, ready))
        return ready

    def _room_for(self, session_id: str | None, *, evict: bool) -> bool:
        """Whether a stream for ``session_id`` is open or may open (``evict``: by closing the
        least recently used session stream no request of ours awaits an answer on)."""
        if session_id is None or session_id in self._streams:
            return True
        opened = [s for s in self._streams if s is not None]
        if len(opened) < self._client_limits.max_session_streams:
            return True
        busy = set(self._awaiting.values())
        idle = next((s for s in opened if s not in busy), None)  # dicts keep opening order
        if not evict or idle is None:
            return False
        self._streams.pop(idle).cancel()  # the server keeps its output until it reopens
        self._ready.pop(idle, None)
        return True

    async def _open(self, session_id: str | None) -> RemoteHttpError | ClientLimitError | None:
        """Open (or wait for) the stream; the server's refusal, if it refused."""
        if session_id is not None and session_id in self._streams:
            self._streams[session_id] = self._streams.pop(session_id)  # most recently used
        elif not self._room_for(session_id, evict=True):
            limit = self._client_limits.max_session_streams
            return ClientLimitError(
                f"a session stream past {limit}, each with a request awaiting its answer",
                "max_session_streams",
            )
        ready = self._start_stream(session_id)
        try:
            await asyncio.shield(ready)
        except RemoteHttpError as exc:
            return exc
        return None

    async def _listen(self, session_id: str | None, ready: asyncio.Future[None]) -> None:
        import httpx

        assert self.connection_id is not None
        limits = self._client_limits
        headers = {"Accept": EVENT_STREAM_MIME, HEADER_CONNECTION_ID: self.connection_id}
        if session_id is not None:
            headers[HEADER_SESSION_ID] = session_id
        try:
            timeout = httpx.Timeout(limits.request_timeout, read=limits.stream_idle_timeout)
            async with self._client.stream(
                "GET", self._url, headers=headers, timeout=timeout
            ) as response:
                if response.status_code != 200:
                    body = await read_start(response, limits.max_error_body_bytes)
                    raise RemoteHttpError("GET", self._url, response.status_code, body)
                kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if kind != EVENT_STREAM_MIME:
                    raise ConnectionError(f"GET {self._url}: not an event stream ({kind!r})")
                ready.set_result(None)
                async for data in sse_data(response, limits.max_message_bytes):
                    message = parse_message(data)
                    if session_id is not None and message is not None and "method" in message:
                        request_id = message_id(message)
                        if request_id is not None:
                            self._server_requests[request_id] = session_id
                    self._feed(data)
                    await self._bound.wait(lambda: self._pipe.buffered)
        except (httpx.HTTPError, OSError) as exc:  # ClientLimitError and RemoteHttpError too
            if isinstance(exc, httpx.ReadTimeout) and ready.done():
                exc = ClientLimitError(
                    f"no event for {limits.stream_idle_timeout:g} s", "stream_idle_timeout"
                )
            if not ready.done():
                ready.set_exception(exc)
                ready.exception()  # retrieved: _open reports it
            if not self._closing and (session_id is None or isinstance(exc, ClientLimitError)):
                where = "connection" if session_id is None else f"session {session_id!r}"
                logger.warning("ACP %s stream ended: %s", where, exc)
        finally:
            if not ready.done():  # cancelled (closing, or evicted) before it was ready
                ready.set_exception(ConnectionError(f"GET {self._url}: stream closed"))
                ready.exception()
            if self._ready.get(session_id) is ready:  # not evicted and replaced meanwhile
                del self._ready[session_id]
                self._streams.pop(session_id, None)
            if session_id is None and not self._closing:
                self._pipe.feed_eof()  # the connection stream is the connection
            elif session_id is not None and not self._closing:
                self._fail_awaiting(session_id)

    def _fail_awaiting(self, session_id: str) -> None:
        """The session's stream ended: its requests will get no answer, so they fail now."""
        error = RemoteHttpError("GET", self._url, 410, b"the session stream closed")
        for request_id in [i for i, s in self._awaiting.items() if s == session_id]:
            del self._awaiting[request_id]
            with contextlib.suppress(ConnectionError):
                self._pipe.feed(error.to_rpc_error(request_id))
