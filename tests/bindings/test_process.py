"""`spawn_agent` lifetimes over a real child process: a stderr flood never blocks the agent, and
on exit stdin closes, then SIGTERM after the grace period, then SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import time

import acp_v2_draft as acp
import pytest
from bindings_support import HERE, PYTHON, python_env

AGENT = str(HERE / "process_agent.py")
INFO = acp.Implementation(name="tests", version="1.0")


async def test_a_stderr_flood_is_captured_without_blocking_the_agent() -> None:
    lines: list[bytes] = []
    async with acp.spawn_agent(
        PYTHON, AGENT, "flood", env=python_env(), stderr=lines.append
    ) as agent:
        result = await agent.initialize(protocol_version=2, info=INFO)
        assert result.protocol_version == 2
        assert agent.stderr is not None and agent.process is not None
    assert agent.stderr.total == 8 * 1024 * 1024 + len(b"last line without newline")
    assert len(agent.stderr.bytes()) == acp.StderrTail().limit  # bounded
    assert agent.stderr.text().endswith("last line without newline")
    assert len(lines) == 8 * 1024 + 1 and lines[-1] == b"last line without newline"
    assert agent.process.returncode == 0  # exited on EOF: no signal needed


async def test_stderr_pipe_keeps_a_bounded_tail() -> None:
    async with acp.spawn_agent(
        PYTHON, AGENT, "flood", env=python_env(), stderr=subprocess.PIPE
    ) as agent:
        await agent.initialize(protocol_version=2, info=INFO)
    assert agent.stderr is not None and agent.stderr.total > 8 * 1024 * 1024


async def test_stderr_is_inherited_by_default(capfd: pytest.CaptureFixture[str]) -> None:
    async with acp.spawn_agent(PYTHON, AGENT, "polite", env=python_env()) as agent:
        await agent.initialize(protocol_version=2, info=INFO)
        assert agent.stderr is None
    assert agent.process is not None and agent.process.returncode == 0


async def test_an_agent_ignoring_sigterm_is_killed_after_the_grace_period() -> None:
    started = time.monotonic()
    async with acp.spawn_agent(
        PYTHON, AGENT, "stubborn", env=python_env(), stderr=subprocess.PIPE, grace=0.5
    ) as agent:
        await agent.initialize(protocol_version=2, info=INFO)
    elapsed = time.monotonic() - started
    assert agent.process is not None and agent.process.returncode == -signal.SIGKILL
    assert agent.stderr is not None and "eof, still here" in agent.stderr.text()
    assert elapsed >= 1.0  # waited once after EOF and once after SIGTERM


async def test_an_agent_ignoring_eof_gets_sigterm_after_the_grace_period() -> None:
    async with acp.spawn_agent(
        PYTHON, AGENT, "deaf", env=python_env(), stderr=subprocess.PIPE, grace=0.5
    ) as agent:
        await agent.initialize(protocol_version=2, info=INFO)
    assert agent.process is not None and agent.process.returncode == -signal.SIGTERM


async def test_a_polite_agent_is_not_signalled() -> None:
    async with acp.spawn_agent(
        PYTHON, AGENT, "polite", env=python_env(), stderr=subprocess.DEVNULL, grace=30
    ) as agent:
        await agent.initialize(protocol_version=2, info=INFO)
    assert agent.process is not None and agent.process.returncode == 0


async def test_stderr_stdout_is_refused() -> None:
    with pytest.raises(ValueError, match="STDOUT"):
        async with acp.spawn_agent(PYTHON, AGENT, "polite", stderr=subprocess.STDOUT):
            pass
