"""`acp-conductor`: run a proxy chain as one agent over stdio.

    acp-conductor --proxy "my-context-proxy --flag" --proxy tool-filter --agent "my-agent --acp"

Each command is one shell-quoted string (what an editor's settings hold), split with `shlex`;
proxies are listed in order from the client. `--proxy-object MODULE:NAME` runs a Python proxy
inside the conductor instead of as a process (cheaper per message; not with `--listen`).
`--listen HOST:PORT` serves remote clients (WebSocket and Streamable HTTP at `/acp`) instead of
stdio, each connection with a chain of its own. The exit status is 0 when the client hung up, 1
when a component exited first (one line on stderr says which), 2 for a usage error or a command
that cannot be started.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..jsonrpc import ReaderLike, WriterLike
from .conductor import Conductor
from .proxy import Proxy


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-conductor",
        description="Run ACP proxies in front of an agent; the client sees one agent on stdio.",
    )
    parser.add_argument(
        "--proxy",
        action="append",
        dest="proxies",
        default=[],
        type=lambda text: ("command", text),
        metavar="CMD",
        help="a proxy's command line (repeat, in order from the client)",
    )
    parser.add_argument(
        "--proxy-object",
        action="append",
        dest="proxies",
        type=lambda text: ("object", text),
        metavar="MODULE:NAME",
        help="a Python proxy run inside the conductor (no process, no pipe crossing): NAME in "
        "MODULE is a Proxy subclass or a callable returning a Proxy; ordered with --proxy",
    )
    parser.add_argument(
        "--agent",
        metavar="CMD",
        help="the agent's command line; without it the conductor is itself a proxy (proxy mode: "
        "run it as another conductor's --proxy, for nested chains)",
    )
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="serve clients over WebSocket and Streamable HTTP at ws://HOST:PORT/acp instead of "
        "stdio, one chain per connection (needs the runtime's `remote` extra)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long each component gets to exit after EOF, and after SIGTERM (default 5)",
    )
    return parser


def _split(parser: argparse.ArgumentParser, what: str, text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        parser.error(f"{what} {text!r}: {exc}")
    if not words:
        parser.error(f"{what} must not be empty")
    return words


def _load(parser: argparse.ArgumentParser, text: str) -> Proxy[Any, Any]:
    """The in-process proxy `MODULE:NAME` names (a usage error when it is not one)."""
    module_name, _, name = text.partition(":")
    try:
        made = getattr(importlib.import_module(module_name), name)()
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        parser.error(f"--proxy-object {text!r}: {exc}")
    if not isinstance(made, Proxy):
        parser.error(f"--proxy-object {text!r}: made {type(made).__name__}, not a Proxy")
    return made


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: parse the chain, serve it on stdio, return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    agent = None if args.agent is None else _split(parser, "--agent", args.agent)
    proxies = [
        _split(parser, "--proxy", text) if kind == "command" else _load(parser, text)
        for kind, text in args.proxies
    ]
    if args.listen is not None:
        if any(isinstance(p, Proxy) for p in proxies):
            parser.error(
                "--proxy-object cannot be combined with --listen (one chain per connection)"
            )
        return _listen(parser, args.listen, agent, proxies, args.grace)
    conductor = Conductor(agent, proxies, grace=args.grace)
    try:
        end = asyncio.run(conductor.serve_stdio())
    except OSError as exc:
        print(f"acp-conductor: cannot start the chain: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    message = end.message()
    if message is None:
        return 0
    print(f"acp-conductor: {message}", file=sys.stderr)
    return 1


def _listen(
    parser: argparse.ArgumentParser,
    address: str,
    agent: list[str] | None,
    proxies: list[list[str] | Proxy[Any, Any]],
    grace: float,
) -> int:
    """Serve the remote transports; each connection gets a chain of its own."""
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        parser.error(f"--listen {address!r}: expected HOST:PORT")
    try:
        from ..remote import serve_remote
    except ImportError as exc:
        print(f"acp-conductor: --listen needs acp-runtime[remote]: {exc}", file=sys.stderr)
        return 2

    def chain() -> Callable[[ReaderLike, WriterLike], Awaitable[None]]:
        conductor = Conductor(agent, proxies, grace=grace)

        async def run(reader: ReaderLike, writer: WriterLike) -> None:
            await conductor.serve(reader, writer)

        return run

    serve_remote(chain, host or "127.0.0.1", int(port), log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
