"""The session history stores (issue 35, requirement 4): the same contract for the in-memory
default, `SqliteHistory` and `RedisHistory`, through `record` (what a session's `send` calls) and
the store interface: history replayed in order with original ids, also after the store is opened
again; live-only updates never stored; concurrent sessions, also from two store instances on one
database (two workers); and a writer process killed with SIGKILL between writes loses nothing
the store acknowledged. The Redis cases run against a redis-server of the test's own and skip,
saying why, where there is none (`nox -s stores` installs it)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_runtime.lifecycle.history import record
from store_kit import (
    DURABLE,
    KINDS,
    RedisServer,
    close_store,
    open_store,
    redis_missing,
    redis_server,
)

HERE = Path(__file__).resolve().parent
WAIT = 20.0  # a bound on waits that succeed at once when the code works


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    reason = redis_missing()
    if reason is not None:
        pytest.skip(reason)
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of the parametrized kind, as a spec that can be opened again."""
    kind: str = request.param
    if kind == "sqlite":
        return f"sqlite:{tmp_path / 'history.db'}"
    if kind == "redis":
        server: RedisServer = request.getfixturevalue("redis")
        return f"redis:{server.url}|t{uuid.uuid4().hex[:8]}:"
    return "memory"


@pytest.fixture
async def store(spec: str) -> AsyncIterator[Any]:
    opened = open_store(spec)
    try:
        yield opened
    finally:
        await close_store(opened)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


TIMELINE: list[dict[str, Any]] = [
    {"sessionUpdate": "user_message", "messageId": "msg_u1", "content": [text("hi")]},
    {"sessionUpdate": "state_update", "state": "running"},
    {"sessionUpdate": "agent_message_chunk", "messageId": "msg_a1", "content": text("hel")},
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "title": "ls",
        "status": "pending",
    },
    {"sessionUpdate": "notice", "level": "info", "message": "live only"},
    {"sessionUpdate": "agent_message_chunk", "messageId": "msg_a1", "content": text("lo")},
    {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"},
    {"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "in_progress"},
    {"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp_1", "content": text("sum")},
    {"sessionUpdate": "compaction_update", "compactionId": "cmp_1", "status": "completed"},
    {"sessionUpdate": "usage_update", "used": 10, "size": 100},
    {"sessionUpdate": "plan_update", "plan": {"planId": "plan_1", "entries": []}},
    {"sessionUpdate": "plan_update", "plan": {"planId": "plan_2", "entries": []}},
    {"sessionUpdate": "plan_removed", "planId": "plan_1"},
    {"sessionUpdate": "future_kind", "x": 1.5},
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
]
REPLAY: list[dict[str, Any]] = [
    {"sessionUpdate": "user_message", "messageId": "msg_u1", "content": [text("hi")]},
    {"sessionUpdate": "agent_message", "messageId": "msg_a1", "content": [text("hel"), text("lo")]},
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "title": "ls",
        "status": "completed",
    },
    {
        "sessionUpdate": "compaction_update",
        "compactionId": "cmp_1",
        "status": "completed",
        "summary": [text("sum")],
    },
    {"sessionUpdate": "plan_update", "plan": {"planId": "plan_2", "entries": []}},
    {"sessionUpdate": "future_kind", "x": 1.5},
]


@pytest.mark.parametrize("spec", KINDS, indirect=True)
async def test_history_is_replayed_in_order_with_original_ids(spec: str, store: Any) -> None:
    for update in TIMELINE:
        await record(store, "sess_1", update)
    assert await store.entries("sess_1") == REPLAY
    assert await store.entries("sess_other") == []
    if spec != "memory":  # the same history from a store opened anew (a restarted process)
        again = open_store(spec)
        try:
            assert await again.entries("sess_1") == REPLAY
        finally:
            await close_store(again)


@pytest.mark.parametrize("spec", KINDS, indirect=True)
async def test_live_only_updates_are_never_stored(store: Any) -> None:
    for update in TIMELINE:
        if update["sessionUpdate"] in ("notice", "state_update", "usage_update"):
            await record(store, "sess_live", update)
    await record(
        store,
        "sess_live",
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "bytes"},
    )
    assert await store.entries("sess_live") == []


@pytest.mark.parametrize("spec", KINDS, indirect=True)
async def test_session_description_and_forget(store: Any) -> None:
    assert await store.load_session("sess_d") is None
    await store.save_session("sess_d", {"cwd": "/w", "version": 2})
    await store.save_session("sess_d", {"cwd": "/w", "version": 2, "title": "first prompt"})
    await record(store, "sess_d", TIMELINE[0])
    assert await store.load_session("sess_d") == {
        "cwd": "/w",
        "version": 2,
        "title": "first prompt",
    }
    await store.forget("sess_d")
    assert (await store.load_session("sess_d"), await store.entries("sess_d")) == (None, [])


async def _stream(store: Any, session_id: str, chunks: int) -> None:
    for n in range(chunks):
        await record(
            store,
            session_id,
            {"sessionUpdate": "user_message", "messageId": f"u{n}", "content": [text(session_id)]},
        )
        await record(
            store,
            session_id,
            {"sessionUpdate": "agent_message_chunk", "messageId": "reply", "content": text(str(n))},
        )


@pytest.mark.parametrize("spec", KINDS, indirect=True)
async def test_concurrent_sessions_keep_their_own_history(spec: str, store: Any) -> None:
    # Two store instances on one database stand for two workers (the memory store: one).
    other = store if spec == "memory" else open_store(spec)
    try:
        sessions = [f"sess_{n}" for n in range(12)]
        await asyncio.wait_for(
            asyncio.gather(
                *(_stream(store if n % 2 else other, sid, 15) for n, sid in enumerate(sessions))
            ),
            WAIT,
        )
        for sid in sessions:
            entries = await store.entries(sid)
            assert [e["messageId"] for e in entries] == [
                "u0",
                "reply",
                *(f"u{n}" for n in range(1, 15)),
            ]
            assert entries[1]["content"] == [text(str(n)) for n in range(15)]
            assert all(e["content"] == [text(sid)] for e in entries if e["messageId"] != "reply")
    finally:
        if other is not store:
            await close_store(other)


@pytest.mark.parametrize("spec", DURABLE, indirect=True)
async def test_a_writer_killed_between_writes_loses_nothing_acknowledged(spec: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    writer = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "store_writer.py"),
        spec,
        "sess_crash",
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert writer.stdout is not None
    acknowledged: list[str] = []
    try:
        async with asyncio.timeout(WAIT):
            assert await writer.stdout.readline() == b"ready\n"
            while len(acknowledged) < 60:  # let it write a while, then kill it mid-stream
                acknowledged.append((await writer.stdout.readline()).decode().strip())
    finally:
        writer.send_signal(signal.SIGKILL)
        rest = await writer.stdout.read()  # what it printed before it died was acknowledged too
        await writer.wait()
    acknowledged += rest.decode().split("\n")
    entries_done = [int(a.split()[1]) for a in acknowledged if a.startswith("entry")]
    chunks_done = [int(a.split()[1]) for a in acknowledged if a.startswith("chunk")]
    store = open_store(spec)
    try:
        entries = await store.entries("sess_crash")
        assert await store.load_session("sess_crash") == {"cwd": "/tmp", "version": 2}
    finally:
        await close_store(store)
    users = [e["messageId"] for e in entries if e["messageId"] != "stream"]
    stream = next(e for e in entries if e["messageId"] == "stream")
    # Everything acknowledged is there, in order (a write in flight at the kill may be too).
    assert users[: max(entries_done) + 1] == [f"u{n}" for n in range(max(entries_done) + 1)]
    assert stream["content"][: max(chunks_done) + 1] == [
        text(str(n)) for n in range(max(chunks_done) + 1)
    ]
    assert [e["messageId"] for e in entries[:2]] == ["u0", "stream"]


async def test_redis_killed_and_restarted_keeps_every_acknowledged_write(
    tmp_path: Path,
) -> None:
    """With the configuration docs/remote.md recommends (`appendonly yes`, `appendfsync always`)
    a redis-server killed with SIGKILL right after acknowledging writes has them all on restart
    (without the append-only file it would restart empty; `always` also covers the machine)."""
    reason = redis_missing()
    if reason is not None:
        pytest.skip(reason)
    server = RedisServer(tmp_path)
    server.start()
    try:
        spec = f"redis:{server.url}|crash:"
        store = open_store(spec)
        try:
            for update in TIMELINE:
                await record(store, "sess_r", update)
        finally:
            await close_store(store)
        server.kill()  # SIGKILL: no shutdown, no final sync
        server.start()  # same port, same directory: it reads its append-only file back
        again = open_store(spec)
        try:
            assert await again.entries("sess_r") == REPLAY
        finally:
            await close_store(again)
    finally:
        server.kill()
