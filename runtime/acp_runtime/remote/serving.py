"""Remote ACP transport, server side: running an ASGI app under uvicorn or hypercorn, hardened.

Owns ``serve_asgi``: what the servers need to face the internet that an ASGI app cannot do itself.
Silent and slow sockets are closed ``header_timeout`` after they connect (uvicorn has no such
timer: a subclass of its h11 protocol adds one; hypercorn's keep-alive timer already covers a
socket that has not sent a request's headers). SIGTERM and SIGINT close every ACP connection
first, so that streams end and agents stop, then the server, all within ``shutdown_timeout``,
and the process exits 0 (uvicorn would re-raise the signal). The soft limit on open files is
raised to the hard one (a flood of sockets must not starve the process of descriptors), and the
servers' loggers, asyncio's and ours are rate-limited (``ratelog``). The event loop is asyncio's
or uvloop's (``loop``; "auto", the default, takes uvloop when it is installed, as the
``remote-fast`` extra does, and asyncio's otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import signal
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from ..jsonrpc import read_from_the_heap
from .asgi import ASGIApp
from .limits import DEFAULT_LIMITS, RemoteLimits
from .ratelog import rate_limit_loggers
from .uvicorn_ws import websocket_protocol

logger = logging.getLogger(__name__.rpartition(".")[0])  # acp_runtime.remote

SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "asyncio", "hypercorn.error")
LOOPS = ("auto", "asyncio", "uvloop")


def loop_factory(loop: str = "auto") -> Callable[[], asyncio.AbstractEventLoop]:
    """The event loop factory of ``loop`` ("auto": uvloop's when it imports, else asyncio's)."""
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {', '.join(LOOPS)}, not {loop!r}")
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                raise RuntimeError(
                    "loop='uvloop' needs uvloop: install the `remote-fast` extra"
                ) from None
        else:
            factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
            return factory
    return asyncio.new_event_loop


def raise_open_file_limit() -> int:
    """Raise the soft limit on open files to the hard limit; the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return soft


def serve_asgi(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    http2: bool = False,
    certfile: str | None = None,
    keyfile: str | None = None,
    log_level: str = "info",
    loop: str = "auto",
    ws_deflate: bool = False,
) -> None:
    """Serve ``app`` until SIGTERM or SIGINT: uvicorn, or hypercorn for HTTP/2 (needs the ``remote``
    extra). The app's ``limits`` (a ``RemoteApp``'s) give the socket and shutdown timeouts.
    ``loop``: "asyncio", "uvloop" (the ``remote-fast`` extra) or "auto" (uvloop if installed).
    ``ws_deflate``: accept permessage-deflate when a WebSocket client offers it (uvicorn). Off by
    default, as in the TypeScript SDK's server (``ws``): its compression contexts took 40 KiB per
    connection (68.6 against 28 KiB at 1,024 connections of clients offering it, as browsers do).

    Without TLS hypercorn speaks HTTP/2 with prior knowledge (h2c) besides HTTP/1.1; with
    ``certfile``/``keyfile`` it negotiates h2 by ALPN, as browsers and most clients require.
    """
    limits: RemoteLimits = getattr(app, "limits", DEFAULT_LIMITS)
    close: Callable[[float], Awaitable[None]] | None = getattr(app, "close", None)
    new_loop = loop_factory(loop)  # a wrong or missing loop fails before anything starts
    raise_open_file_limit()
    rate_limit_loggers(SERVER_LOGGERS)
    if http2:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(
                _serve_hypercorn(app, host, port, certfile, keyfile, log_level, limits, close)
            )
    else:
        ws = websocket_protocol()  # frames of a loop turn in one write
        _serve_uvicorn(
            app, host, port, (certfile, keyfile), log_level, limits, close, new_loop, ws, ws_deflate
        )


async def _close_app(close: Callable[[float], Awaitable[None]] | None, timeout: float) -> None:
    """Close the app's connections first: their streams end, so the server's wait is short."""
    if close is None:
        return
    try:
        async with asyncio.timeout(timeout):
            await close(timeout * 0.8)  # agents get most of it; cancelling them, the rest
    except Exception:  # a failing agent must not keep the process alive
        logger.exception("closing the ACP connections failed")


def _serve_uvicorn(
    app: ASGIApp,
    host: str,
    port: int,
    tls: tuple[str | None, str | None],
    log_level: str,
    limits: RemoteLimits,
    close: Callable[[float], Awaitable[None]] | None,
    new_loop: Callable[[], asyncio.AbstractEventLoop],
    ws: type[asyncio.Protocol],
    ws_deflate: bool,
) -> None:
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("serve_remote needs uvicorn: install the `remote` extra") from exc
    shutdown = limits.shutdown_timeout
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ssl_certfile=tls[0],
        ssl_keyfile=tls[1],
        http=_guarded_h11(limits.header_timeout),
        ws=ws,
        ws_per_message_deflate=ws_deflate,
        ws_max_size=limits.max_request_body_bytes,
        lifespan="on",
        loop="none",  # the server's `run` makes the loop with `new_loop`
        # The app's close takes half the time; what the server still waits for, a fifth.
        timeout_graceful_shutdown=max(shutdown / 5, 0.1),  # type: ignore[arg-type]
    )
    _Server(config, close, shutdown / 2, new_loop).run()


def _guarded_h11(header_timeout: float) -> type[asyncio.Protocol]:
    """The h11 protocol of uvicorn, closing a socket that sends no whole request head in time."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _guard: asyncio.TimerHandle | None = None
        _guarded_cycle: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            read_from_the_heap(transport)  # (the WebSocket after an upgrade reads through it too)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._guarded_cycle = self.cycle
            self._guard = self.loop.call_later(header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._guard is not None:
                self._guard.cancel()
                self._guard = None

        def _expired(self) -> None:
            self._guard = None
            # No new request since the timer was armed: the head is missing or incomplete.
            if self.cycle is self._guarded_cycle and not self.transport.is_closing():
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's head must come in time too

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._disarm()  # the WebSocket has timeouts of its own (setup, idle, pings)
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11Protocol


def _uvicorn_server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, closing the ACP connections before its own shutdown, and leaving
        the process to exit 0 after a signal (uvicorn re-raises it)."""

        def __init__(
            self,
            config: uvicorn.Config,
            close: Callable[[float], Awaitable[None]] | None,
            close_timeout: float,
            new_loop: Callable[[], asyncio.AbstractEventLoop],
        ) -> None:
            super().__init__(config)
            self._close_app = close
            self._close_timeout = close_timeout
            self._new_loop = new_loop

        def run(self, sockets: Any = None) -> None:
            with asyncio.Runner(loop_factory=self._new_loop) as runner:
                runner.run(self.serve(sockets=sockets))

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            signals = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: Any = None) -> None:
            for server in self.servers:
                server.close()  # no new connections while the old ones close
            await _close_app(self._close_app, self._close_timeout)
            await super().shutdown(sockets)

    return Server


def _Server(
    config: Any,
    close: Callable[[float], Awaitable[None]] | None,
    close_timeout: float,
    new_loop: Callable[[], asyncio.AbstractEventLoop],
) -> Any:
    return _uvicorn_server_class()(config, close, close_timeout, new_loop)


async def _serve_hypercorn(
    app: ASGIApp,
    host: str,
    port: int,
    certfile: str | None,
    keyfile: str | None,
    log_level: str,
    limits: RemoteLimits,
    close: Callable[[float], Awaitable[None]] | None,
) -> None:
    try:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "serve_remote(http2=True) needs hypercorn: install the `remote` extra"
        ) from exc
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.loglevel = log_level.upper()
    # Idle sockets, and sockets whose request head is incomplete, count as idle for hypercorn.
    config.keep_alive_timeout = min(config.keep_alive_timeout, limits.header_timeout)
    config.graceful_timeout = max(limits.shutdown_timeout / 5, 0.1)
    config.websocket_max_message_size = limits.max_request_body_bytes
    if certfile is not None:
        config.certfile = certfile
        config.keyfile = keyfile
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)

    async def shutdown_trigger() -> None:
        await stop.wait()
        await _close_app(close, limits.shutdown_timeout / 2)

    await serve(app, config, shutdown_trigger=shutdown_trigger)  # type: ignore[arg-type]
