"""Running `python -m acp_codegen ARGS` without paying its imports each time: a warm process per
test process imports the CLI once, then forks a child per run. The child is a real process, as a
subprocess would be: its own pid, `ARGS` in `sys.argv`, the caller's cwd, environment and umask,
stdin `/dev/null`, stdout and stderr pipes (not terminals), and the CLI's own entry (`cli.main`,
which ends the process with its status). Only the imports happened before the arguments were known.

That difference matters only for what is decided at interpreter start or at import, so runs whose
environments differ in such a variable (`PYTHON*`, the locale, the terminal's: `STARTUP_KEYS`) get
warm processes of their own; a run with an explicit `PYTHONHASHSEED` gets a fresh subprocess, as
does every run when `ACP_TESTS_FRESH_CLI=1` or off Linux. (The children of one warm process share
its hash secret: a test that compares runs under different hash seeds sets them explicitly.)
The CLI's imports themselves (which commands import what, how fast it exits) are tested with
fresh subprocesses (tests/test_fast_exit.py, tests/test_cli_help.py).

Why: the suite runs the CLI about 400 times; its imports (typer, rich, pydantic, jinja2 and the
toolkit: about 0.3 s of CPU) were a sixth of the CI's CPU time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

STARTUP_KEYS = (
    "PYTHON",
    "LANG",
    "LC_",
    "TERM",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "TYPER_",
)
"""Environment variables (prefixes) read at interpreter start or at import: a run that sets them
otherwise than the warm process gets a fresh subprocess."""

_SERVER = r"""
import importlib, json, os, pkgutil, socket, sys, traceback

import acp_codegen
import acp_codegen.cli  # what `python -m acp_codegen` imports before it reads its arguments

# and what its commands import when they run (lazily, so that `--help` stays quick): the toolkit's
# every module, which is what most runs would import again
for module in pkgutil.walk_packages(acp_codegen.__path__, "acp_codegen."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)

channel = socket.socket(fileno=int(sys.argv[1]))
while True:
    message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 2)
    if not message:
        break  # the test process has gone
    request = json.loads(message)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        channel.close()
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((null, 0), (fds[0], 1), (fds[1], 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [sys.argv[0], *request["args"]]
        try:
            acp_codegen.cli.main()  # never returns: it ends the process with the CLI's status
        except BaseException:
            traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    for fd in fds:
        os.close(fd)
    channel.send(json.dumps({"pid": pid}).encode())
    _, status = os.waitpid(pid, 0)
    channel.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
"""


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_KEYS)}


class _Warm:
    """The warm process of this test process and the channel to it."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self.channel = ours

    def run(
        self, args: list[str], cwd: Path, env: Mapping[str, str], timeout: float
    ) -> tuple[int, str, str]:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        request = {"args": args, "cwd": str(cwd), "env": dict(env), "umask": _umask()}
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], [out_write, err_write])
        finally:
            os.close(out_write)
            os.close(err_write)
        deadline = time.monotonic() + timeout
        pid = None
        try:
            self.channel.settimeout(timeout)
            pid = json.loads(self.channel.recv(4096))["pid"]
            out, err = _read_both(out_read, err_read, deadline)
            self.channel.settimeout(max(0.001, deadline - time.monotonic()))
            status: int = json.loads(self.channel.recv(4096))["status"]
        except BaseException as exc:
            # The child is stopped and the warm process dropped by our caller: the channel's
            # replies would now be out of step with the requests.
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for fd in (out_read, err_read):
                with contextlib.suppress(OSError):
                    os.close(fd)
            if isinstance(exc, (TimeoutError, subprocess.TimeoutExpired)):
                raise subprocess.TimeoutExpired(["acp-codegen", *args], timeout) from None
            raise
        return status, _text(out), _text(err)

    def close(self) -> None:
        self.channel.close()  # the warm process reads EOF and ends
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _read_both(out_fd: int, err_fd: int, deadline: float) -> tuple[bytes, bytes]:
    """Both pipes read to their end (as `subprocess.run` does), or `TimeoutExpired`."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("acp-codegen", 0)
            for key, _ in selector.select(left):
                data = os.read(key.fd, 1 << 16)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _text(data: bytes) -> str:
    # as `subprocess.run(text=True)` decodes: the locale's encoding, universal newlines
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _umask() -> int:
    """This process's umask, read without setting it (threads may be running)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise OSError("no Umask line in /proc/self/status")


_warm: dict[tuple[tuple[str, str], ...], _Warm] = {}
"""The warm processes of this test process, by the startup variables they were started with."""
_lock = threading.Lock()  # one run at a time through a warm process (threads may call)


def run_acp_codegen(
    args: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int, str, str]:
    """Run the CLI with `args` in `cwd` with exactly `env`: (exit status, stdout, stderr)."""
    fresh = env.get("ACP_TESTS_FRESH_CLI") == "1" or os.environ.get("ACP_TESTS_FRESH_CLI") == "1"
    # An explicit hash seed is about interpreter start: always a fresh interpreter. The warm
    # process needs Linux (SOCK_SEQPACKET Unix sockets, /proc/self/status): elsewhere, fresh.
    if not fresh and "PYTHONHASHSEED" not in env and sys.platform == "linux":
        key = tuple(sorted(_startup(env).items()))
        with _lock:
            warm = _warm.get(key)
            if warm is None or warm.process.poll() is not None:
                warm = _warm[key] = _Warm(env, cwd)
                atexit.register(warm.close)
            try:
                return warm.run(args, cwd, env, timeout)
            except BaseException:
                del _warm[key]  # its replies may be out of step now: start afresh next time
                warm.close()
                raise
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
