"""The remote server against hostile peers at scale (issue 32): floods and slow peers against
`serve_remote` in its own process, with the default limits unless a test says otherwise. Minutes
of load on 2 cores: run with `-m hostile` (`nox -s hostile`), skipped otherwise. Each test prints
its figures ("FIGURE ..."), which docs/remote.md quotes.

The quick cases of the same defences run in the normal suite: test_exposed.py and
test_exposed_server.py.
"""

from __future__ import annotations

import asyncio
import json
import resource
import signal
import time
from pathlib import Path
from typing import Self

import httpx
import pytest

from tests.remote.hostile_kit import INIT, ServerProcess, server_process

pytestmark = pytest.mark.hostile
MiB = 1024 * 1024
NEW = {"cwd": "/", "mcpServers": []}


@pytest.fixture(autouse=True)
def _only_when_asked(request: pytest.FixtureRequest) -> None:
    if "hostile" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("minutes of load: run with -m hostile (nox -s hostile)")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # this process opens thousands too
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def figure(name: str, value: object) -> None:
    print(f"FIGURE {name}: {value}")


class PeakRss:
    """Samples a server's resident memory every 50 ms while the block runs."""

    def __init__(self, server: ServerProcess) -> None:
        self.server, self.peak, self.base = server, 0.0, server.rss_mib()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        async def sample() -> None:
            while True:
                self.peak = max(self.peak, self.server.rss_mib())
                await asyncio.sleep(0.05)

        self._task = asyncio.create_task(sample())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def _initialize(http: httpx.AsyncClient) -> dict[str, str]:
    answer = await http.post("/acp", json=INIT)
    assert answer.status_code == 200, answer.text
    return {"Acp-Connection-Id": answer.headers["acp-connection-id"]}


async def _post_raw(
    base: str, headers: dict[str, str], body: bytes, send: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST announcing `body`, of which `send` bytes are sent; the socket, still open."""
    host, port = base.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = f"POST /acp HTTP/1.1\r\nHost: {base}\r\nContent-Type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[:send])
    return reader, writer


async def _status(reader: asyncio.StreamReader, timeout: float) -> int:
    """The response's status; 0 when the server closed the socket while the body was still
    coming (refused before reading it: the reset can overtake the answer)."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except ConnectionResetError:
        return 0
    return int(line.split()[1]) if line else 0


async def test_large_bodies_without_a_connection_are_never_read(tmp_path: Path) -> None:
    async with server_process(tmp_path) as server:
        pad = "x" * (16 * MiB - 200)
        body = json.dumps({**INIT, "params": {"pad": pad}}).encode()
        async with PeakRss(server) as rss:
            no_connection = [await _post_raw(server.base, {}, body, len(body)) for _ in range(32)]
            unknown = {"Acp-Connection-Id": "forged"}
            forged = [await _post_raw(server.base, unknown, body, len(body)) for _ in range(32)]
            statuses = [await _status(reader, 120) for reader, _ in no_connection + forged]
        for _, writer in no_connection + forged:
            writer.close()
    figure("64 x 16 MiB POSTs, no or forged connection: statuses", _counts(statuses))
    figure(
        "64 x 16 MiB POSTs, no or forged connection: RSS MiB before/peak",
        (round(rss.base), round(rss.peak)),
    )
    assert statuses == [413] * 32 + [404] * 32
    assert rss.peak - rss.base < 50


async def test_concurrent_large_bodies_stay_within_the_budget(tmp_path: Path) -> None:
    async with (
        server_process(tmp_path) as server,
        httpx.AsyncClient(base_url=f"http://{server.base}", timeout=120) as http,
    ):
        conn = await _initialize(http)
        pad = "x" * (16 * MiB - 200)
        body = json.dumps({"jsonrpc": "2.0", "method": "x/note", "params": {"pad": pad}}).encode()
        async with PeakRss(server) as rss:
            sockets = [await _post_raw(server.base, conn, body, len(body)) for _ in range(32)]
            statuses = [await _status(reader, 120) for reader, _ in sockets]
        for _, writer in sockets:
            writer.close()
    figure("32 x 16 MiB POSTs on a connection: statuses", _counts(statuses))
    figure(
        "32 x 16 MiB POSTs on a connection: RSS MiB before/peak", (round(rss.base), round(rss.peak))
    )
    # 408: on 2 shared cores some bodies take longer than body_timeout to come in
    assert set(statuses) <= {0, 202, 408, 503} and statuses.count(202) < 32
    # the 256 MiB budget, plus the copies made while each body is parsed and handed on
    assert rss.peak - rss.base < 900


def _counts(statuses: list[int]) -> dict[int, int]:
    return {status: statuses.count(status) for status in sorted(set(statuses))}


async def test_stalled_bodies_are_answered_and_released(tmp_path: Path) -> None:
    limits = {"body_timeout": 5.0}
    async with (
        server_process(tmp_path, limits=limits) as server,
        httpx.AsyncClient(base_url=f"http://{server.base}") as http,
    ):
        conn = await _initialize(http)
        body = b'{"jsonrpc":"2.0","method":"x/note","params":{"pad":"' + b"x" * (8 * MiB) + b'"}}'
        async with PeakRss(server) as rss:
            started = time.monotonic()
            sockets = [await _post_raw(server.base, conn, body, len(body) // 2) for _ in range(100)]
            statuses = [await _status(reader, 60) for reader, _ in sockets]
            elapsed = time.monotonic() - started
        for _, writer in sockets:
            writer.close()
    figure("100 bodies stalled halfway: statuses", _counts(statuses))
    figure("100 bodies stalled halfway: all answered after s", round(elapsed, 1))
    figure("100 bodies stalled halfway: RSS MiB before/peak", (round(rss.base), round(rss.peak)))
    assert set(statuses) <= {408, 503}
    assert rss.peak - rss.base < 400


async def test_idle_sockets_do_not_lock_out_a_client(tmp_path: Path) -> None:
    # The server may open 1,024 files; 1,100 sockets connect and say nothing.
    async with server_process(tmp_path, preexec=["ulimit -n 1024"]) as server:
        host, port = server.base.split(":")
        idle = []
        for _ in range(1100):
            try:
                idle.append(await asyncio.wait_for(asyncio.open_connection(host, int(port)), 5))
            except (OSError, TimeoutError):
                break
        started = time.monotonic()
        async with httpx.AsyncClient(base_url=f"http://{server.base}", timeout=5) as http:
            while True:
                try:
                    await _initialize(http)
                    break
                except httpx.HTTPError:
                    assert time.monotonic() - started < 60, "a client was locked out for a minute"
        served = time.monotonic() - started
        closed = 0
        for reader, writer in idle:
            try:
                closed += await asyncio.wait_for(reader.read(1), 30) == b""
            except (OSError, TimeoutError):
                closed += 1
            writer.close()
        log = server.log()
    figure("1,100 idle sockets, ulimit -n 1024: new client served after s", round(served, 1))
    figure("1,100 idle sockets: closed by the server", f"{closed} of {len(idle)}")
    figure("1,100 idle sockets: server log lines", log.count("\n"))
    assert closed == len(idle)
    assert log.count("\n") < 200


async def _session(http: httpx.AsyncClient, conn: dict[str, str]) -> str:
    """session/new, its answer read from the connection stream."""
    sse = {**conn, "Accept": "text/event-stream"}
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": NEW}
    async with http.stream("GET", "/acp", headers=sse) as stream:
        assert stream.status_code == 200, stream.status_code
        assert (await http.post("/acp", json=new, headers=conn)).status_code == 202
        seen = []
        async for line in stream.aiter_lines():
            seen.append(line)
            if line.startswith("data: "):
                session: str = json.loads(line[6:])["result"]["sessionId"]
                return session
    raise AssertionError(f"no answer: {seen}")


async def test_clients_that_stop_reading_stay_within_the_budget(tmp_path: Path) -> None:
    async with (
        server_process(tmp_path, "bigflood") as server,
        httpx.AsyncClient(base_url=f"http://{server.base}", timeout=60) as http,
    ):
        host, port = server.base.split(":")
        streams, waits = [], []
        async with PeakRss(server) as rss:
            for _ in range(8):  # each floods 100 MiB into a session stream it never reads
                conn = await _initialize(http)
                session = await _session(http, conn)
                _reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(
                    f"GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                    f"Acp-Connection-Id: {conn['Acp-Connection-Id']}\r\n"
                    f"Acp-Session-Id: {session}\r\n\r\n".encode()
                )
                streams.append(writer)
                prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "flood 400"}]}
                flood = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
                scoped = {**conn, "Acp-Session-Id": session}
                # 404 once the server has cut this client off to keep within its budget
                assert (await http.post("/acp", json=flood, headers=scoped)).status_code in (
                    202,
                    404,
                )
            for _ in range(5):  # meanwhile a client that reads is served
                started = time.monotonic()
                await _session(http, await _initialize(http))
                waits.append(time.monotonic() - started)
                await asyncio.sleep(2)
        for writer in streams:
            writer.close()
    figure(
        "8 clients not reading 100 MiB each: RSS MiB before/peak",
        (round(rss.base), round(rss.peak)),
    )
    figure("8 clients not reading: slowest setup of a reading client, s", round(max(waits), 1))
    assert rss.peak - rss.base < 600  # 256 MiB budget, socket buffers, copies being encoded


async def test_a_flood_of_initialize_only_connections_is_reclaimed(tmp_path: Path) -> None:
    # 256 slots (not 4,096) so that 2 shared cores fill the table within setup_timeout
    async with (
        server_process(tmp_path, limits={"max_connections": 256}) as server,
        httpx.AsyncClient(
            base_url=f"http://{server.base}", limits=httpx.Limits(max_connections=16)
        ) as http,
    ):
        started = time.monotonic()

        async def one() -> int:
            return (await http.post("/acp", json=INIT)).status_code

        statuses = []
        for _ in range(512 // 64):
            statuses += await asyncio.gather(*(one() for _ in range(64)))
        filled = time.monotonic() - started
        refused = time.monotonic()
        while (await http.post("/acp", json=INIT)).status_code != 200:
            assert time.monotonic() - refused < 60, "new clients refused for a minute"
            await asyncio.sleep(0.2)
        locked_out = time.monotonic() - refused
    figure("512 initialize-only POSTs, 256 slots: sent in s", round(filled, 1))
    figure("512 initialize-only POSTs, 256 slots: statuses", _counts(statuses))
    figure(
        "512 initialize-only POSTs, 256 slots: new client served again after s",
        round(locked_out, 1),
    )


async def test_refused_ids_do_not_grow_the_server(tmp_path: Path) -> None:
    async with (
        server_process(tmp_path) as server,
        httpx.AsyncClient(base_url=f"http://{server.base}") as http,
    ):
        conn = await _initialize(http)
        await http.post(
            "/acp", json={"jsonrpc": "2.0", "id": 1, "method": "session/list"}, headers=conn
        )
        before = server.rss_mib()
        for n in range(10_000):
            body = {"jsonrpc": "2.0", "id": f"{n:06}" + "y" * 1000, "method": "session/list"}
            answer = await http.post("/acp", json=body, headers=conn)
            assert answer.status_code == 400
        after = server.rss_mib()
    figure(
        "10,000 requests with 1,006-character ids: RSS MiB before/after",
        (round(before), round(after)),
    )
    assert after - before < 5  # before the fix: +13 MiB (the routes of 10,000 ids)


@pytest.mark.parametrize("http2", [False, True], ids=["uvicorn", "hypercorn"])
async def test_sigterm_with_many_clients_holding_on(tmp_path: Path, http2: bool) -> None:
    async with server_process(tmp_path, "hang", http2=http2) as server:
        host, port = server.base.split(":")
        body = json.dumps(INIT).encode()
        held = []
        for _ in range(100):  # initialize POSTs the agent never answers, and idle sockets
            held.append(await _post_raw(server.base, {}, body, len(body)))
            held.append(await asyncio.open_connection(host, int(port)))
        await asyncio.sleep(1)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(server.process.wait, 30)
        took = time.monotonic() - started
        for _, writer in held:
            writer.close()
    name = "hypercorn" if http2 else "uvicorn"
    figure(
        f"SIGTERM, {name}, 100 pending initialize + 100 idle sockets: exit code, s",
        (code, round(took, 1)),
    )
    assert code == 0 and took < 10 + 2  # shutdown_timeout, and the process's own exit
