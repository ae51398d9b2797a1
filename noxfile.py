"""Nox sessions: tests, lint, typecheck, regen, bench."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.default_venv_backend = "venv"

GENERATED = ["acp_v2_draft", "acp_v2", "acp_v1"]


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the toolkit, tests and benchmarks."""
    session.install("ruff>=0.5")
    session.run("ruff", "check", "codegen", "tests", "bench", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the toolkit and the generated packages."""
    session.install("-e", ".[test]")
    session.run("mypy", "--strict", "codegen")
    session.chdir("generated")
    session.run("mypy", "--strict", *GENERATED)


@nox.session
def regen(session: nox.Session) -> None:
    """Refresh every golden file: generated/ and the diff goldens."""
    session.install("-e", ".[test]")
    session.run("acp-codegen", "generate")
    session.run("python", "tests/diff/regen.py")
    session.run("python", "scripts/regen_conformance_doc.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Run every benchmark script (figures are ratios against a baseline of the same run)."""
    session.install("-e", ".[test,bench]")
    for script in (
        "bench/generate.py",
        "bench/throughput.py",
        "bench/rpc.py",
        "bench/diff.py",
        "bench/session_state.py",
    ):
        session.run("python", script, *session.posargs)
