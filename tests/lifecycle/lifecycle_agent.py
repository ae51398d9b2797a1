"""A `TurnAgent` on a generated package (argv[1]: acp_v1 or acp_v2_draft) whose turn does what
its prompt says: `fail` raises, `hang` waits for ever, `slow` streams slowly, `permission` asks
to run a tool call, anything else is echoed word by word. The same `respond` serves v1 and v2.
With `HISTORY_DB` set, its sessions live in that SQLite file (`SqliteHistory`)."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from typing import Any

from acp_runtime.jsonrpc import Limits
from acp_runtime.lifecycle import Sessions, SqliteHistory, Turn, TurnAgent

acp: Any = importlib.import_module(sys.argv[1])


class Agent(TurnAgent, acp.Agent):  # type: ignore[misc]
    name = "lifecycle-agent"

    async def respond(self, turn: Turn) -> str | None:
        text = turn.text
        if "fail" in text:
            await turn.say("about to fail")
            await turn.tool_call("doomed")
            raise RuntimeError("secret failure text")
        if "hang" in text:
            await turn.say("hanging")
            await asyncio.sleep(3600)
        await turn.think("thinking")
        for word in text.split():
            await asyncio.sleep(0.2 if "slow" in text else 0)
            await turn.say(word + " ")
        await turn.plan([{"content": "echo", "priority": "high", "status": "completed"}])
        if "permission" in text:
            call = await turn.tool_call("count", raw_input={"text": text})
            if not await call.allowed("Run it?"):
                await call.update("cancelled", note="not allowed")
                return "refusal" if "refuse" in text else None
            await call.update("in_progress")
            await call.output(f"words: {len(text.split())}")
            await call.update("completed", raw_output={"words": len(text.split())})
        return None


if __name__ == "__main__":
    limits = Limits(turn_timeout=float(os.environ.get("TURN_TIMEOUT", "10")))
    db = os.environ.get("HISTORY_DB")
    sessions = Sessions(SqliteHistory(db)) if db else None
    asyncio.run(acp.serve_agent(Agent(sessions), limits=limits))
