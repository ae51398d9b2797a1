"""A writer process the crash test kills with SIGKILL: it records updates of one session into the
store its spec names (argv[1], see store_kit.open_store), forever, and prints a line for each
write once the store acknowledged it (the `record` call returned)."""

from __future__ import annotations

import asyncio
import itertools
import sys

from acp_runtime.lifecycle.history import record
from store_kit import open_store


async def main(spec: str, session_id: str) -> None:
    store = open_store(spec)
    await store.save_session(session_id, {"cwd": "/tmp", "version": 2})
    print("ready", flush=True)
    for n in itertools.count():
        text = [{"type": "text", "text": f"u{n}"}]
        await record(
            store,
            session_id,
            {"sessionUpdate": "user_message", "messageId": f"u{n}", "content": text},
        )
        print(f"entry {n}", flush=True)
        chunk = {"type": "text", "text": str(n)}
        await record(
            store,
            session_id,
            {"sessionUpdate": "agent_message_chunk", "messageId": "stream", "content": chunk},
        )
        print(f"chunk {n}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
