"""`nox -s cluster`: the scale-out deployment of docs/remote.md, run for real (issue 35, req 3).

HAProxy (haproxy.cfg) in front of three workers (worker.py) sharing one session store (Redis or
an SQLite file), driven through the balancer by our remote clients, WebSocket and Streamable HTTP:

1. affinity: many connections at once, two sessions each, two prompts per session; every message
   of a connection must come from the worker that answered its `initialize` (each streamed word
   names its worker; over HTTP every POST and stream is a request of its own, so a request routed
   elsewhere would fail with 404 unknown connection);
2. failover: connections stream slow turns on two sessions; the busiest worker is killed with
   SIGKILL mid-turn; its clients reconnect through the balancer with their cookie jar (the cookie
   names the dead worker: HAProxy redispatches), `session/resume` each session with `replayFrom:
   start` on another worker, get the history (the user message with its original id, the reply
   with at least every chunk they had received live) and prompt again there; the other workers'
   turns end normally;
3. the same as 1 with the TypeScript SDK's ws and http clients (skipped without node and npm).

Prints the figures as JSON (and writes them to --json). Exit status 0 when every check held.

usage: run.py [--store sqlite|redis] [--connections 48] [--failover 24] [--ts-connections 24]
              [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from cluster_kit import GENERATED, running
from ts_phase import node_client, typescript

sys.path.insert(0, str(GENERATED))
import acp_v2_draft as acp  # noqa: E402
from acp_runtime import remote  # noqa: E402
from acp_runtime.lifecycle import PromptingClient  # noqa: E402

STEP = 30.0  # a bound on one step that succeeds at once when the cluster works


class Client(PromptingClient, acp.Client):  # type: ignore[misc]
    """Keeps every update by session, in arrival order."""

    def __init__(self) -> None:
        self.seen: dict[str, list[dict[str, Any]]] = defaultdict(list)

    async def session_update(self, params: Any) -> None:
        self.seen[params.session_id].append(params.update.to_dict())
        await super().session_update(params)


class Conn:
    """One client connection through the balancer, and the worker it reached."""

    def __init__(self, url: str, jar: CookieJar) -> None:
        self.url, self.jar = url, jar
        self.client = Client()
        self.worker = ""
        self.peer: Any = None
        self.connection: Any = None

    async def open(self) -> Conn:
        self.client = Client()
        self.peer, self.connection = await remote.connect_url(
            self.url, self.client, cookies=self.jar
        )
        await self.connection.__aenter__()
        answer = await asyncio.wait_for(
            self.peer.initialize(2, acp.Implementation(name="cluster", version="1")), STEP
        )
        self.worker = answer.to_dict()["info"]["name"]
        return self

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.connection.close(), STEP)

    def check_tags(self, text: str) -> int:
        """Every word names this connection's worker; how many words."""
        words = text.split()
        wrong = [w for w in words if not w.startswith(f"{self.worker}:")]
        assert not wrong, f"{self.url}: words from another worker than {self.worker}: {wrong[:3]}"
        return len(words)


def transport_url(base: str, n: int) -> str:
    return f"{'ws' if n % 2 == 0 else 'http'}://{base}/acp"


async def affinity(base: str, connections: int) -> dict[str, Any]:
    """Phase 1: every message of each connection comes from its worker."""

    async def one(n: int) -> tuple[str, int]:
        conn = await Conn(transport_url(base, n), CookieJar()).open()
        try:
            sessions = [
                (await asyncio.wait_for(conn.peer.session_new("/tmp"), STEP)).session_id
                for _ in range(2)
            ]
            words = 0
            for round_ in range(2):
                turns = [
                    conn.client.prompt(sid, f"round {round_} of {sid} on {n}") for sid in sessions
                ]
                for result in await asyncio.wait_for(asyncio.gather(*turns), STEP):
                    assert result.stop_reason == "end_turn", result
                    words += conn.check_tags(result.text)
            for sid in sessions:  # every update of the session, not only those of awaited turns
                for update in conn.client.seen[sid]:
                    if update["sessionUpdate"] == "agent_message_chunk":
                        conn.check_tags(update["content"]["text"])
            return conn.worker, words
        finally:
            await conn.close()

    started = time.perf_counter()
    results = await asyncio.gather(*(one(n) for n in range(connections)))
    elapsed = time.perf_counter() - started
    per_worker = Counter(worker for worker, _ in results)
    assert len(per_worker) >= 2, f"all connections reached one worker: {per_worker}"
    return {
        "connections": connections,
        "sessions": 2 * connections,
        "prompts": 4 * connections,
        "words_checked": sum(w for _, w in results),
        "connections_per_worker": dict(sorted(per_worker.items())),
        "seconds": round(elapsed, 2),
    }


async def failover(cluster: Any, base: str, connections: int) -> dict[str, Any]:
    """Phase 2: kill the busiest worker mid-turn; its clients resume elsewhere."""
    conns = [await Conn(transport_url(base, n), CookieJar()).open() for n in range(connections)]
    sessions: dict[Conn, list[str]] = {}
    for conn in conns:
        sessions[conn] = [
            (await asyncio.wait_for(conn.peer.session_new("/tmp"), STEP)).session_id
            for _ in range(2)
        ]
    words = " ".join(f"word{i}" for i in range(40))
    turns = {
        (conn, sid): asyncio.ensure_future(conn.client.prompt(sid, f"slow 100 {words}"))
        for conn in conns
        for sid in sessions[conn]
    }

    def chunks(conn: Conn, sid: str) -> list[dict[str, Any]]:
        return [
            u["content"]
            for u in conn.client.seen[sid]
            if u["sessionUpdate"] == "agent_message_chunk"
        ]

    async with asyncio.timeout(STEP):  # every turn is under way
        while not all(len(chunks(conn, sid)) >= 3 for conn, sid in turns):
            await asyncio.sleep(0.05)
    victim = Counter(conn.worker for conn in conns).most_common(1)[0][0]
    moved = [conn for conn in conns if conn.worker == victim]
    killed_at = time.perf_counter()
    cluster.kill(victim)

    async def survive(conn: Conn, sid: str, task: asyncio.Future[Any]) -> bool:
        """A turn of another worker ends normally."""
        result = await asyncio.wait_for(task, STEP)
        assert result.stop_reason == "end_turn" and conn.check_tags(result.text) == 42, result
        return True

    async def resume(conn: Conn) -> dict[str, Any]:
        for sid in sessions[conn]:  # the turns cannot end: the connection drops
            with contextlib.suppress(Exception):
                await asyncio.wait_for(turns[conn, sid], STEP)
        detected = time.perf_counter() - killed_at
        live = {sid: (conn.client.seen[sid][0], chunks(conn, sid)) for sid in sessions[conn]}
        await conn.close()
        started = time.perf_counter()
        await conn.open()  # the same cookie jar: the cookie names the dead worker
        reconnected = time.perf_counter() - started
        assert conn.worker != victim, f"reconnected to the dead worker {victim}"
        replayed = 0
        for sid, (echo, received) in live.items():
            await asyncio.wait_for(
                conn.peer.session_resume(sid, "/tmp", replay_from=acp.ReplayFromStart_()), STEP
            )
            history = conn.client.seen[sid]
            assert history[0] == echo, (history[0], echo)  # the user message, its original id
            reply = history[1]
            assert reply["sessionUpdate"] == "agent_message", reply
            assert reply["content"][: len(received)] == received, "a received chunk is missing"
            assert history[-1] == {"sessionUpdate": "state_update", "state": "idle"}, history[-1]
            replayed += len(reply["content"])
        latency = time.perf_counter() - started
        for sid in live:  # the session goes on, on its new worker
            result = await asyncio.wait_for(conn.client.prompt(sid, "after the failover"), STEP)
            assert result.stop_reason == "end_turn" and conn.check_tags(result.text) == 3
        return {
            "transport": conn.url.partition(":")[0],
            "detected": detected,
            "reconnected": reconnected,
            "resumed": latency,
            "replayed": replayed,
        }

    async def resumed_all() -> list[dict[str, Any]]:
        outcomes = await asyncio.gather(*(resume(conn) for conn in moved))
        nonlocal recovered
        recovered = time.perf_counter() - killed_at
        return outcomes

    recovered = 0.0
    outcomes, *survived = await asyncio.gather(
        resumed_all(),
        *(survive(conn, sid, task) for (conn, sid), task in turns.items() if conn.worker != victim),
    )
    survivors_ok = sum(survived)
    new_workers = Counter(conn.worker for conn in moved)
    for conn in conns:
        await conn.close()

    def spread(key: str) -> dict[str, float]:
        values = [o[key] for o in outcomes]
        return {"p50": round(statistics.median(values), 3), "max": round(max(values), 3)}

    return {
        "connections": connections,
        "killed": victim,
        "moved_connections": len(moved),
        "moved_sessions": 2 * len(moved),
        "moved_to": dict(sorted(new_workers.items())),
        "surviving_turns_completed": survivors_ok,
        "replayed_chunks": sum(o["replayed"] for o in outcomes),
        "seconds_from_kill_to_drop_seen": spread("detected"),
        "seconds_to_reconnect": spread("reconnected"),
        "seconds_to_reconnect_and_resume_both_sessions": spread("resumed"),
        "seconds_from_kill_to_all_resumed": round(recovered, 3),
    }


async def scenario(cluster: Any, args: argparse.Namespace, node: str | None) -> dict[str, Any]:
    return {
        "store": cluster.store_kind,
        "workers": len(cluster.workers),
        "affinity": await affinity(cluster.base, args.connections),
        "typescript": await typescript(cluster.base, node, args.ts_connections),
        "failover": await failover(cluster, cluster.base, args.failover),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["sqlite", "redis"], default="sqlite")
    parser.add_argument("--connections", type=int, default=48)
    parser.add_argument("--failover", type=int, default=24)
    parser.add_argument("--ts-connections", type=int, default=24)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from cluster_kit import missing

    reason = missing(args.store)
    if reason is not None:
        print(f"cluster ({args.store}) skipped: {reason}")
        return 0
    with (
        tempfile.TemporaryDirectory(prefix="acp-cluster-") as home,
        running(Path(home), args.store) as cluster,
    ):
        try:
            figures = asyncio.run(scenario(cluster, args, node_client()))
        except Exception as error:  # a failed check, a timeout, a refused request: all reported
            logs = "\n".join(
                f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                for p in Path(home).glob("*.log")
            )
            print(f"cluster ({args.store}) FAILED: {error!r}\n{logs}", file=sys.stderr)
            return 1
    print(json.dumps(figures, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
