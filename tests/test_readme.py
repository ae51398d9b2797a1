"""The README's Python blocks, run as written: its two-version agent, driven over pipes by its client and by tests."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

import acp_v1

V1_ONLY_AGENT = ROOT / "tests" / "versions" / "routed_agent.py"


def python_blocks() -> dict[str, str]:
    """Every ```python block of the README, by the file name its first line gives (`# agent.py: ...`)."""
    blocks = re.findall(
        r"^```python\n(.*?)^```$",
        (ROOT / "README.md").read_text(encoding="utf-8"),
        re.MULTILINE | re.DOTALL,
    )
    named: dict[str, str] = {}
    for block in blocks:
        first = block.splitlines()[0]
        match = re.fullmatch(r"# (\w+\.py): .+", first)
        assert (
            match
        ), f"README python block without a `# <file>.py: ...` first line, so no test runs it: {first!r}"
        named[match[1]] = block
    return named


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The README's blocks written to their files."""
    for name, text in python_blocks().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(GENERATED), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def test_every_python_block_is_one_of_the_run_files() -> None:
    assert list(python_blocks()) == ["agent.py", "client.py"]  # the two-version agent first


def _client(project: Path, *command: str) -> str:
    done = subprocess.run(
        [sys.executable, "client.py", *command],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_the_readme_client_talks_v2_to_the_readme_agent(project: Path) -> None:
    assert _client(project) == "v2 v2-session\n"


def test_the_readme_client_talks_v1_to_a_v1_only_agent(project: Path) -> None:
    assert _client(project, sys.executable, str(V1_ONLY_AGENT), "1") == "v1 v1-session\n"


async def test_the_readme_agent_serves_a_v1_only_client(project: Path) -> None:
    offers = {
        1: acp_v1.InitializeRequest(
            protocol_version=1, client_info=acp_v1.Implementation(name="zed", version="1")
        )
    }
    negotiated, process = await acp_v1.spawn_negotiated(
        [sys.executable, "agent.py"], {1: acp_v1.Client()}, offers, env=_env(), cwd=project
    )
    async with negotiated.connection:
        assert negotiated.version == 1 and isinstance(
            negotiated.response, acp_v1.InitializeResponse
        )
        assert (
            negotiated.response.agent_info is not None
            and negotiated.response.agent_info.name == "my-agent"
        )
        session = await negotiated.peer.session_new(
            acp_v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        assert session.session_id == "v1-session"
    assert await asyncio.wait_for(process.wait(), 10) == 0


def test_the_readme_blocks_pass_mypy_strict(project: Path, mypy_cache: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(mypy_cache),
            "agent.py",
            "client.py",
        ],
        cwd=project,
        env={**_env(), "MYPYPATH": str(GENERATED)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
