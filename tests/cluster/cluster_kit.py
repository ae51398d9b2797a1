"""The processes of the cluster (tests/cluster/run.py): a shared store (a redis-server of its own,
append-only and synced on every write, or one SQLite file), N workers (worker.py), and HAProxy
in front of them with haproxy.cfg as it is, its ports from the environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATED = HERE.parents[1] / "generated"
WORKERS = 3  # the servers haproxy.cfg names (w1..w3)
START = 30.0  # a bound on a process starting to listen


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        if process.poll() is not None:
            raise SystemExit(f"{what} exited at start with status {process.returncode}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not listen on port {port} within {START:.0f} s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Cluster:
    """The running cluster: the balancer's URL base, the workers by name (w1..)."""

    def __init__(self, home: Path, store: str) -> None:
        self.home = home
        self.store_kind = store
        self.processes: list[subprocess.Popen[bytes]] = []
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.front = free_port()
        self.store = ""

    @property
    def base(self) -> str:
        return f"127.0.0.1:{self.front}"

    def _spawn(
        self, label: str, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        with open(self.home / f"{label}.log", "ab") as log:  # the child keeps its own descriptor
            process = subprocess.Popen(argv, stdout=log, stderr=log, env=env)
        self.processes.append(process)
        return process

    def start(self) -> None:
        if self.store_kind == "redis":
            port = free_port()
            redis = self._spawn(
                "redis",
                [
                    "redis-server",
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    str(self.home),
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    "always",
                    "--save",
                    "",
                ],
            )
            wait_listening(port, redis, "redis-server")
            self.store = f"redis:redis://127.0.0.1:{port}/0|acp:"
        else:
            self.store = f"sqlite:{self.home / 'sessions.db'}"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")]),
        }
        ports = {f"ACP_W{n}_PORT": str(free_port()) for n in range(1, WORKERS + 1)}
        for n in range(1, WORKERS + 1):
            name, port = f"w{n}", ports[f"ACP_W{n}_PORT"]
            worker = self._spawn(
                name, [sys.executable, str(HERE / "worker.py"), name, port, self.store], env
            )
            self.workers[name] = worker
        for n, (name, worker) in enumerate(self.workers.items(), 1):
            wait_listening(int(ports[f"ACP_W{n}_PORT"]), worker, f"worker {name}")
        haproxy = self._spawn(
            "haproxy",
            ["haproxy", "-db", "-f", str(HERE / "haproxy.cfg")],
            {**os.environ, **ports, "ACP_FRONT_PORT": str(self.front)},
        )
        wait_listening(self.front, haproxy, "haproxy")

    def kill(self, name: str) -> None:
        """SIGKILL one worker: no shutdown, its connections cut mid-turn."""
        self.workers[name].kill()
        self.workers[name].wait()

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop(process)


@contextlib.contextmanager
def running(home: Path, store: str) -> Iterator[Cluster]:
    cluster = Cluster(home, store)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def missing(store: str) -> str | None:
    """Why the cluster cannot run here, or None."""
    if shutil.which("haproxy") is None:
        return "no haproxy on PATH (Debian: apt-get install haproxy)"
    if store == "redis" and shutil.which("redis-server") is None:
        return "no redis-server on PATH (Debian: apt-get install redis-server)"
    return None
