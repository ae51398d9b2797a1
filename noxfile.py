"""Nox sessions: tests, slow, network, hostile, hostile_clients, coverage, lint, typecheck, regen,
bench, bench_remote, pydantic, interop, stores, cluster."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.default_venv_backend = "venv"

GENERATED = ["acp_v2_draft", "acp_v2", "acp_v1"]
# The runtime library and the toolkit, editable (compat mode: a path entry type checkers follow).
INSTALL = ("--config-settings", "editable_mode=compat", "-e", "./runtime", "-e")


def install(session: nox.Session, extras: str = "test") -> None:
    """The runtime library and the toolkit with `extras`, as scripts/test.sh installs them."""
    session.install(*INSTALL, f".[{extras}]")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite."""
    install(session)
    session.run("pytest", *session.posargs)


@nox.session
def slow(session: nox.Session) -> None:
    """The end-to-end variants marked `slow`, which the README's test command (CI's 8-minute budget
    on 2 cores) skips: more peers' transports, more chain shapes, more lifecycle cases."""
    install(session)
    session.run("pytest", "-n", "auto", "-m", "slow", *session.posargs, env={"ACP_SLOW_TESTS": "1"})


@nox.session
def network(session: nox.Session) -> None:
    """The tests that talk to the real npm registry and package index (`-m network`)."""
    install(session)
    session.run("pytest", "-m", "network", *session.posargs)


@nox.session
def hostile(session: nox.Session) -> None:
    """The remote server against floods and slow peers at scale (`-m hostile`, minutes of load;
    the quick cases run in the suite): prints the figures docs/remote.md quotes."""
    install(session)
    session.run(
        "pytest",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "-s",
        "-m",
        "hostile",
        "tests/remote/test_hostile.py",
        *session.posargs,
    )


@nox.session
def hostile_clients(session: nox.Session) -> None:
    """The slow hostile-peer figures of the runtime output and the clients (`-m hostile_clients`):
    results and requests over 64 MiB to a reading peer, hostile agents against the HTTP client."""
    install(session)
    session.run("pytest", "-m", "hostile_clients", "-n", "0", *session.posargs)


@nox.session
def coverage(session: nox.Session) -> None:
    """Coverage of the runtime library (runtime/acp_runtime) by its suites."""
    install(session)
    session.run(
        "pytest",
        "--cov=acp_runtime",
        "--cov-report=term-missing",
        "tests/runtime",
        "tests/models",
        "tests/remote",
        "tests/versions",
        *session.posargs,
    )


@nox.session
def lint(session: nox.Session) -> None:
    """black --check and ruff (both pinned by the project) over our own code: the toolkit, the
    runtime, tests, benchmarks and scripts (tests/test_quality.py runs the same in the suite)."""
    install(session)
    own = ("acp_codegen", "runtime/acp_runtime", "tests", "bench", "scripts", "noxfile.py")
    session.run("black", "--check", *own)
    session.run("ruff", "check", *own)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the toolkit, the runtime and the generated packages."""
    install(session)
    session.run("mypy", "--strict", "acp_codegen")
    session.run("mypy", "--strict", "runtime/acp_runtime")
    session.chdir("generated")
    session.run("mypy", "--strict", *GENERATED)


@nox.session
def regen(session: nox.Session) -> None:
    """Refresh every golden file: generated/, the small generator cases, the diff and upgrade
    goldens and the conformance table."""
    install(session)
    session.run("acp-codegen", "generate")
    session.run("python", "tests/generator/cases/regen.py")
    session.run("python", "tests/diff/regen.py")
    session.run("python", "tests/upgrade/regen.py")
    session.run("python", "scripts/regen_conformance_doc.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Run every benchmark script (figures are ratios against a baseline of the same run)."""
    install(session, "test,bench")
    for script in (
        "bench/generate.py",
        "bench/throughput.py",
        "bench/startup.py",
        "bench/rpc.py",
        "bench/diff.py",
        "bench/session_state.py",
        "bench/remote.py",
        "bench/chain.py",
        "bench/stores.py",
    ):
        session.run("python", script, *session.posargs)


@nox.session
def bench_remote(session: nox.Session) -> None:
    """bench/remote.py's long runs: our server and the TypeScript SDK's AcpServer over WebSocket
    and Streamable HTTP at 16 to 4,096 connections, the load from two node processes (figures
    in docs/remote.md; `-- --connections 1024 --transports ws` for one point, `--json PATH`)."""
    install(session, "test,bench")
    session.run(
        "npm", "install", "--no-audit", "--no-fund", "--prefix", "tests/remote", external=True
    )
    session.run(
        "python",
        "bench/remote.py",
        "--connections=16,64,256,1024,4096",
        "--transports=ws,http",
        *session.posargs,
    )


# Every pydantic minor release the project supports, from pyproject's lower bound to the newest on
# PyPI; each session installs that minor's newest patch. The fast path reads pydantic-core's schema
# structure, which changes between minors, so each one runs the model, runtime and reliability
# suites; what differs between them is handled in acp_codegen/runtime/_compat.py. Add each new minor
# here when it is released.
PYDANTIC_MINORS = ["2.11", "2.12", "2.13", "2.14"]


@nox.session
@nox.parametrize("minor", PYDANTIC_MINORS)
def pydantic(session: nox.Session, minor: str) -> None:
    """The model, runtime and reliability suites against one pydantic minor release."""
    install(session)
    session.install(f"pydantic~={minor}.0")
    session.run("python", "-c", "import pydantic; print('pydantic', pydantic.VERSION)")
    session.run(
        "pytest",
        "-q",
        "-n",
        "auto",
        "tests/models",
        "tests/runtime",
        "tests/reliability",
        *session.posargs,
    )


@nox.session
def interop(session: nox.Session) -> None:
    """Every third-party ACP peer (tests/interop/peers/catalog.py), the heavy ones included
    (fast-agent on Python 3.13, acpx on node 22), against our scaffolded agent and client; then
    re-measure their probe figures into docs/peer-figures.json and docs/conformance.md. Each peer
    installs into its own environment under ~/.cache/acp-codegen/peers (tests/interop/peer_envs.py).
    """
    install(session)
    session.run(
        "pytest",
        "-n",
        "auto",
        "tests/interop",
        *session.posargs,
        env={"ACP_INTEROP_HEAVY": "1", "ACP_SLOW_TESTS": "1"},
    )
    session.run("python", "scripts/peer_figures.py")


def apt_install(session: nox.Session, program: str, package: str) -> bool:
    """Whether `program` is on PATH, installing Debian's `package` first when it is not and this
    runs as root with apt-get (CI and developer machines); False (the caller skips) otherwise."""
    import os
    import shutil

    if shutil.which(program) is not None:
        return True
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return False
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env)
    session.run("apt-get", "install", "-y", "-qq", package, external=True, env=env)
    return shutil.which(program) is not None


@nox.session
def stores(session: nox.Session) -> None:
    """The session history stores' contract tests (memory, SQLite, Redis) and a session resumed
    by a restarted agent; installs Debian's redis-server when it can (the Redis cases skip,
    saying why, without it)."""
    session.install(
        "--config-settings", "editable_mode=compat", "-e", "./runtime[redis]", "-e", ".[test]"
    )
    if not apt_install(session, "redis-server", "redis-server"):
        session.warn("no redis-server and no way to install it: the Redis cases will skip")
    session.run(
        "pytest",
        "-n",
        "0",
        "-rs",
        "tests/lifecycle/test_stores.py",
        "tests/lifecycle/test_store_restart.py",
        *session.posargs,
    )


@nox.session
def cluster(session: nox.Session) -> None:
    """HAProxy (tests/cluster/haproxy.cfg) in front of three workers sharing a session store,
    SQLite then Redis: affinity of many connections, then a worker killed mid-turn and its
    sessions resumed on another (tests/cluster/run.py). Installs Debian's haproxy and
    redis-server when it can; skips, saying why, when it cannot."""
    if not apt_install(session, "haproxy", "haproxy"):
        session.skip("no haproxy and no way to install it (Debian: apt-get install haproxy)")
    session.install(
        "--config-settings",
        "editable_mode=compat",
        "-e",
        "./runtime[remote,redis]",
        "-e",
        ".[test]",
    )
    session.run("python", "tests/cluster/run.py", "--store", "sqlite", *session.posargs)
    if apt_install(session, "redis-server", "redis-server"):
        session.run("python", "tests/cluster/run.py", "--store", "redis", *session.posargs)
    else:
        session.warn("no redis-server and no way to install it: the Redis cluster is skipped")
