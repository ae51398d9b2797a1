"""One worker of the cluster (tests/cluster/run.py): a v2 `TurnAgent` served over WebSocket and
Streamable HTTP by `serve_asgi`, its sessions in the shared store (`sqlite:PATH` or
`redis:URL|PREFIX`). Its `initialize` answer names the worker, and every word it streams is
tagged with that name, so a client sees which worker each message of its connection reached.

usage: worker.py NAME PORT STORE   (the prompt "slow N ..." streams with N ms between words)
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import acp_v2_draft as acp
from acp_runtime import remote
from acp_runtime.lifecycle import RedisHistory, Sessions, SqliteHistory, Turn, TurnAgent


def open_store(spec: str) -> Any:
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        return SqliteHistory(where)
    url, _, prefix = where.partition("|")
    return RedisHistory(url, prefix=prefix)


class Agent(TurnAgent, acp.Agent):  # type: ignore[misc]
    async def respond(self, turn: Turn) -> None:
        words = turn.text.split()
        delay = int(words[1]) / 1000 if words[0] == "slow" else 0.0
        for word in words:
            await asyncio.sleep(delay)
            await turn.say(f"{self.name}:{word} ")


def main() -> None:
    name, port, spec = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    agent = type("WorkerAgent", (Agent,), {"name": name})(Sessions(open_store(spec)))
    # No cookie of the app's own: HAProxy inserts the affinity cookie (SERVERID).
    app = remote.acp_asgi_app(agent, affinity_cookie=None)
    remote.serve_asgi(app, "127.0.0.1", port, log_level="warning")


if __name__ == "__main__":
    main()
