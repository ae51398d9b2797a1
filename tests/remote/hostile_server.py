"""A server for the hostile-peer tests: `serve_remote` in its own process, as an operator runs it.

    python hostile_server.py PORT AGENT [--http2] [--limits JSON]

AGENT: `echo` (tests/remote/support.py's EchoAgent), `hang` (its initialize never returns) or
`bigflood` (EchoAgent whose "flood N" sends N chunks of 256 KiB).
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

from tests.remote.support import EchoAgent, acp, remote


class HangingAgent(EchoAgent):
    """An agent whose initialize never answers."""

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class BigFloodAgent(EchoAgent):
    """EchoAgent whose floods are of 256 KiB chunks."""

    async def _flood(self, session: str, count: int) -> None:
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m_flood",
            "content": {"type": "text", "text": "x" * 256 * 1024},
        }
        for _ in range(count):
            await self._send(session, chunk)


AGENTS = {"echo": EchoAgent, "hang": HangingAgent, "bigflood": BigFloodAgent}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("agent", choices=sorted(AGENTS))
    parser.add_argument("--http2", action="store_true")
    parser.add_argument("--limits", default="{}")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    agent = AGENTS[args.agent]()
    limits = remote.RemoteLimits(**json.loads(args.limits))
    remote.serve_remote(agent, "127.0.0.1", args.port, http2=args.http2, limits=limits)


if __name__ == "__main__":
    main()
