"""Session history stores: what recording a session's updates and replaying it costs.

For each store (`MemoryHistory`, `SqliteHistory` with `synchronous` FULL and NORMAL, and
`RedisHistory` when a `redis-server` is on PATH: two of the bench's own, append-only with
`appendfsync always` and `everysec`), `record` (what a session's `send` calls: a read and a write per chunk):

- `1 session`: one session streaming `--updates` message chunks, one after the other (each
  waits for the store's acknowledgement, as a turn does): updates/s and the time per update;
- `N sessions`: `--sessions` sessions streaming at once (the SQLite store commits the writes
  that arrive together in one transaction);
- `replay`: reading back the entries of a session of `--entries` entries (what
  `session/resume` sends), milliseconds.

The SQLite file is on the temporary directory's disk; FULL syncs it at each commit, so the
figures depend on that disk. Each figure is the best of `--rounds` runs.

    python bench/stores.py [--updates 1000] [--sessions 16] [--entries 1000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp_runtime.lifecycle import MemoryHistory, RedisHistory, SqliteHistory
from acp_runtime.lifecycle.history import record

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lifecycle"))
from store_kit import RedisServer, redis_missing  # noqa: E402


def chunk(n: int, message: str = "msg_1") -> dict[str, Any]:
    content = {"type": "text", "text": f"word{n} "}
    return {"sessionUpdate": "agent_message_chunk", "messageId": message, "content": content}


async def stream(store: Any, session_id: str, updates: int) -> None:
    for n in range(updates):
        await record(store, session_id, chunk(n))


async def measure(make: Any, args: argparse.Namespace) -> dict[str, float]:
    best: dict[str, float] = {}
    for round_ in range(args.rounds):
        store = make()
        try:
            started = time.perf_counter()
            await stream(store, f"one{round_}", args.updates)
            one = args.updates / (time.perf_counter() - started)
            per = args.updates // args.sessions
            started = time.perf_counter()
            await asyncio.gather(
                *(stream(store, f"s{round_}.{n}", per) for n in range(args.sessions))
            )
            many = per * args.sessions / (time.perf_counter() - started)
            for n in range(args.entries):
                await store.put(f"replay{round_}", f"k{n}", chunk(n, f"m{n}"))
            started = time.perf_counter()
            assert len(await store.entries(f"replay{round_}")) == args.entries
            replay = (time.perf_counter() - started) * 1000
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                await close()
        best["1 session updates/s"] = max(best.get("1 session updates/s", 0), one)
        best[f"{args.sessions} sessions updates/s"] = max(
            best.get(f"{args.sessions} sessions updates/s", 0), many
        )
        best["replay ms"] = min(best.get("replay ms", float("inf")), replay)
    best["us per update (1 session)"] = 1e6 / best["1 session updates/s"]
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="", help="measure the stores whose name has this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp-bench-stores-") as home:
        stores: dict[str, Any] = {
            "memory": MemoryHistory,
            "sqlite FULL": lambda: SqliteHistory(Path(home) / "full.db"),
            "sqlite NORMAL": lambda: SqliteHistory(Path(home) / "normal.db", synchronous="NORMAL"),
        }
        servers: list[RedisServer] = []
        if redis_missing() is None and shutil.which("redis-server"):
            for fsync in ("always", "everysec"):
                (Path(home) / fsync).mkdir()
                server = RedisServer(Path(home) / fsync, fsync)
                server.start()
                servers.append(server)
                stores[f"redis (appendfsync {fsync})"] = lambda url=server.url: RedisHistory(
                    url
                )  # type: ignore[misc]
        try:
            print(
                f"{'store':28} {'1 session/s':>12} {'us/update':>10} "
                f"{f'{args.sessions} sessions/s':>14} {'replay ms':>10}"
            )
            for name, make in stores.items():
                if args.only not in name:
                    continue
                f = asyncio.run(measure(make, args))
                print(
                    f"{name:28} {f['1 session updates/s']:12,.0f} "
                    f"{f['us per update (1 session)']:10,.0f} "
                    f"{f[f'{args.sessions} sessions updates/s']:14,.0f} {f['replay ms']:10.1f}"
                )
        finally:
            for server in servers:
                server.kill()
        if not servers:
            print(f"redis: skipped ({redis_missing() or 'no redis-server'})")


if __name__ == "__main__":
    main()
