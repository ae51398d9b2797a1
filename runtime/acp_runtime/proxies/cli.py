"""`acp-conductor`: run a proxy chain as one agent over stdio.

    acp-conductor --proxy "my-context-proxy --flag" --proxy tool-filter --agent "my-agent --acp"

Each command is one shell-quoted string (what an editor's settings hold), split with `shlex`;
proxies are listed in order from the client. The exit status is 0 when the client hung up, 1 when
a component exited first (one line on stderr says which), 2 for a usage error or a command that
cannot be started.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Sequence

from .conductor import Conductor


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-conductor",
        description="Run ACP proxies in front of an agent; the client sees one agent on stdio.",
    )
    parser.add_argument(
        "--proxy",
        action="append",
        default=[],
        metavar="CMD",
        help="a proxy's command line (repeat, in order from the client)",
    )
    parser.add_argument("--agent", required=True, metavar="CMD", help="the agent's command line")
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


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: parse the chain, serve it on stdio, return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    agent = _split(parser, "--agent", args.agent)
    proxies = [_split(parser, "--proxy", text) for text in args.proxy]
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


if __name__ == "__main__":
    sys.exit(main())
