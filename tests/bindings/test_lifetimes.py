"""Process lifetimes through the public API over real child processes: `spawn_agent(cwd=,
env=)` runs the agent where and with what it is told (both stderr paths), and
`async with serve_agent(agent) as client:` serves for exactly the block: the peer works inside
it, and leaving it closes the connection, so the agent exits while its stdin is still open."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import acp_v2_draft as acp
import pytest
from bindings_support import HERE, PYTHON, python_env

AGENTS = str(HERE / "probe_agents.py")
INFO = acp.Implementation(name="tests", version="1.0")


@pytest.mark.parametrize("stderr", [None, subprocess.PIPE], ids=["inherited", "captured"])
async def test_spawn_agent_runs_the_agent_in_cwd_with_env(tmp_path: Path, stderr: Any) -> None:
    where = tmp_path / "work dir"
    where.mkdir()
    assert os.path.realpath(os.getcwd()) != os.path.realpath(where)
    env = {**python_env(), "ACP_PROBE": "marked-42"}
    assert os.environ.get("ACP_PROBE") is None  # only the child sees it
    async with acp.spawn_agent(PYTHON, AGENTS, "where", cwd=where, env=env, stderr=stderr) as agent:
        result = await agent.initialize(protocol_version=2, info=INFO)
    assert result.meta is not None
    assert os.path.realpath(result.meta["cwd"]) == os.path.realpath(where)
    assert result.meta["probe"] == "marked-42"


class Asked(acp.Client):
    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.answered = asyncio.Event()
        self.answer: Any = None

    async def extension_request(self, method: str, params: Any) -> Any:
        if method == "_probe/inside":
            self.asked.append(params)
            return {"ok": params["pid"]}
        return await super().extension_request(method, params)

    async def extension_notification(self, method: str, params: Any) -> None:
        if method == "_probe/answered":
            self.answer = params
            self.answered.set()


async def test_serve_agent_as_a_context_manager_serves_for_the_block() -> None:
    client = Asked()
    lines: list[bytes] = []
    async with acp.spawn_agent(
        PYTHON, AGENTS, "block", client=client, env=python_env(), stderr=lines.append, grace=30
    ) as agent:
        assert agent.process is not None
        # inside the block: the yielded client peer sends a request and gets our answer
        await asyncio.wait_for(client.answered.wait(), 30)
        assert client.asked == [{"pid": agent.process.pid}]
        assert client.answer == {"answer": {"ok": agent.process.pid}}
        assert agent.process.returncode is None  # still serving: the block has not ended
        assert b"left the block" not in lines
        # end the block; the agent's stdin stays open, yet the process exits by itself
        await agent.ext_notify("_probe/finish")
        returncode = await asyncio.wait_for(agent.process.wait(), 30)
        assert returncode == 0
        for _ in range(400):  # the stderr pump may lag the exit a little
            if b"left the block" in lines:
                break
            await asyncio.sleep(0.005)
        assert b"left the block" in lines
        # the agent closed the connection on leaving the block: nothing answers any more
        with pytest.raises(ConnectionError, match="connection closed"):
            await asyncio.wait_for(agent.ext_request("_probe/after", {}), 10)
    assert agent.process.returncode == 0  # exited on its own: never signalled
