"""A server for the hostile-peer tests: `serve_remote` in its own process, as an operator runs it.

    python hostile_server.py PORT AGENT [--http2] [--limits JSON]

AGENT: `echo` (tests/remote/support.py's EchoAgent) or `hang` (its initialize never returns).
`--limits` holds `RemoteLimits` fields as JSON. Logs go to stderr at level info.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.remote.support import EchoAgent, acp, remote  # noqa: E402


class HangingAgent(EchoAgent):
    """An agent whose initialize never answers."""

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("agent", choices=["echo", "hang"])
    parser.add_argument("--http2", action="store_true")
    parser.add_argument("--limits", default="{}")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    agent = EchoAgent() if args.agent == "echo" else HangingAgent()
    limits = remote.RemoteLimits(**json.loads(args.limits))
    remote.serve_remote(agent, "127.0.0.1", args.port, http2=args.http2, limits=limits)


if __name__ == "__main__":
    main()
