"""`SqliteHistory`: session history in an SQLite file, the embedded store for one host.

It survives a restart of the process (and a crash: every write is committed before the call that
made it returns), and several processes of one host may share the file (the workers behind a
balancer): WAL mode lets readers go on while one writes, and a writer waits up to `timeout` for
another's lock. Each session's entries keep the position of their first insertion (the rowid,
which an upsert keeps), so a replay sends them in timeline order.

SQLite writes block (a commit syncs the disk), so they run in one thread of the store's own; the
event loop only waits (reads are quick and run at once, on a connection of their own). Writes
arriving while a transaction commits are committed together in the next one (group commit): a
streaming turn's many small updates cost one disk sync per batch, not one each, and none is
acknowledged before its batch is durable (`synchronous="FULL"`, the default: durable
against power loss too; `"NORMAL"` against a crash of the process only, with fewer syncs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from .history import Json

_SCHEMA = """
CREATE TABLE IF NOT EXISTS acp_entries (
    seq INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    UNIQUE (session_id, key)
);
CREATE INDEX IF NOT EXISTS acp_entries_timeline ON acp_entries (session_id, seq);
CREATE TABLE IF NOT EXISTS acp_sessions (
    session_id TEXT PRIMARY KEY,
    info TEXT NOT NULL
);
"""
_MAX_BATCH = 256  # operations committed in one transaction at most
_READ_TIMEOUT = 1.0  # a reader waits for a lock only in rare cases (WAL recovery): briefly
_STOP = object()

Op = Callable[[sqlite3.Connection], Any]


def _dumps(value: Json) -> str:
    # Non-finite numbers are not JSON: the runtime refuses them on the wire, so does the store.
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class SqliteHistory:
    """A `HistoryStore` in the SQLite file `path` (created with its tables if absent)."""

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: str = "FULL", timeout: float = 30.0
    ) -> None:
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}")
        self.path = os.fspath(path)
        # Opened here, in the caller's thread, so that a bad path fails at once with its reason.
        self._db = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.executescript(_SCHEMA)
        # Reads run at once on the event loop's thread, on a connection of their own: in WAL mode
        # a reader does not wait for writers, and a point read by key takes microseconds, less
        # than a hop to the writer thread. Every acknowledged write is committed, so it is seen.
        self._reader = sqlite3.connect(
            self.path, timeout=_READ_TIMEOUT, isolation_level=None, check_same_thread=False
        )
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="acp-sqlite-history", daemon=True)
        self._thread.start()
        self._closed = False

    # ------------------------------------------------------------------ the store interface

    async def get(self, session_id: str, key: str) -> Json | None:
        """One entry, or None."""

        def op(db: sqlite3.Connection) -> Json | None:
            rows = db.execute(
                "SELECT entry FROM acp_entries WHERE session_id = ? AND key = ?", (session_id, key)
            ).fetchall()  # all: the statement ends, no read snapshot stays open
            return dict(json.loads(rows[0][0])) if rows else None

        result: Json | None = self._read(op)
        return result

    async def put(self, session_id: str, key: str, entry: Json) -> None:
        """Insert at the end, or replace in place (the upsert keeps the row's position)."""
        text = _dumps(entry)
        await self._call(
            lambda db: db.execute(
                "INSERT INTO acp_entries (session_id, key, entry) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id, key) DO UPDATE SET entry = excluded.entry",
                (session_id, key, text),
            )
        )

    async def remove(self, session_id: str, key: str) -> None:
        """Drop one entry (no error if absent)."""
        await self._call(
            lambda db: db.execute(
                "DELETE FROM acp_entries WHERE session_id = ? AND key = ?", (session_id, key)
            )
        )

    async def entries(self, session_id: str) -> list[Json]:
        """The session's entries in timeline order."""

        def op(db: sqlite3.Connection) -> list[Json]:
            rows = db.execute(
                "SELECT entry FROM acp_entries WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
            return [dict(json.loads(row[0])) for row in rows]

        result: list[Json] = self._read(op)
        return result

    async def forget(self, session_id: str) -> None:
        """Drop the session's entries and description."""

        def op(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM acp_entries WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM acp_sessions WHERE session_id = ?", (session_id,))

        await self._call(op)

    async def save_session(self, session_id: str, info: Json) -> None:
        """Keep the session's description."""
        text = _dumps(info)
        await self._call(
            lambda db: db.execute(
                "INSERT INTO acp_sessions (session_id, info) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET info = excluded.info",
                (session_id, text),
            )
        )

    async def load_session(self, session_id: str) -> Json | None:
        """The session's description, or None."""

        def op(db: sqlite3.Connection) -> Json | None:
            rows = db.execute(
                "SELECT info FROM acp_sessions WHERE session_id = ?", (session_id,)
            ).fetchall()  # all: the statement ends, no read snapshot stays open
            return dict(json.loads(rows[0][0])) if rows else None

        result: Json | None = self._read(op)
        return result

    async def close(self) -> None:
        """Finish the queued operations, then close the file (the store is unusable after)."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(_STOP)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)
        self._reader.close()

    # ------------------------------------------------------------------ reads here, writes there

    def _read(self, op: Op) -> Any:
        if self._closed:
            raise RuntimeError("the SQLite history store is closed")
        return op(self._reader)

    async def _call(self, op: Op, write: bool = True) -> Any:
        if self._closed:
            raise RuntimeError("the SQLite history store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((op, write, loop, future))
        return await future

    def _run(self) -> None:
        """Take the waiting operations, run them in one transaction, commit, then answer each."""
        while True:
            batch = [self._jobs.get()]
            while len(batch) < _MAX_BATCH:
                try:
                    batch.append(self._jobs.get_nowait())
                except queue.Empty:
                    break
            stop = any(job is _STOP for job in batch)
            jobs = [job for job in batch if job is not _STOP]
            if jobs:
                self._commit(jobs)
            if stop:
                self._db.close()
                return

    def _commit(self, jobs: list[Any]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        try:
            # A batch that writes takes the write lock at once (no lock upgrade to deadlock on).
            writes = any(job[1] for job in jobs)
            self._db.execute("BEGIN IMMEDIATE" if writes else "BEGIN")
            for op, _write, _loop, _future in jobs:
                try:
                    outcomes.append((True, op(self._db)))
                except (sqlite3.Error, ValueError) as error:  # this operation only
                    outcomes.append((False, error))
            self._db.execute("COMMIT")
        except sqlite3.Error as error:  # nothing of the batch is durable: every call fails
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            outcomes = [(False, error)] * len(jobs)
        for (_op, _write, loop, future), (ok, value) in zip(jobs, outcomes, strict=True):
            with contextlib.suppress(RuntimeError):  # the caller's loop is closed: no one waits
                loop.call_soon_threadsafe(_settle, future, ok, value)


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
