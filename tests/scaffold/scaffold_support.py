"""Scaffold test support: running the README's "one minute" commands, and quick scaffolds.

`run_section` runs the shell block of README.md's "Start a new agent in one minute" section as
written, one line at a time, in a temporary directory: it scaffolds an agent and a client,
installs each into its own venv (`python3 -m venv` + `pip install -e`), runs their own test
suites and runs the client against the agent. The tests then use the two installed projects.
test_scaffold_projects.py holds the session fixtures that call these.

It has its own CLI runner: the scaffold commands run from a scratch directory with the project's
venv on PATH, as the README's reader runs them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from acp_codegen.sources import project_root

ROOT = project_root()
SECTION = "## Start a new agent in one minute"
COMMAND_TIMEOUT = 900.0  # one venv install with pip; a guard against a hang, not a measurement


@dataclass(frozen=True)
class CliResult:
    """What one `acp-codegen` subprocess run did."""

    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """For assertion messages."""
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_cli(*args: str | os.PathLike[str], cwd: Path = ROOT) -> CliResult:
    """Run `python -m acp_codegen ARGS` (stdout not a terminal, no colour) and capture the result."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def tree_bytes(directory: Path) -> dict[str, bytes]:
    """relative path -> bytes of every file under `directory` (caches left out)."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def section_commands(readme: Path = ROOT / "README.md") -> list[str]:
    """The lines of the first ```sh block in the README's "one minute" section."""
    text = readme.read_text(encoding="utf-8")
    assert SECTION in text, f"README.md has no {SECTION!r} section"
    block = re.search(r"```sh\n(.*?)```", text.split(SECTION, 1)[1], re.DOTALL)
    assert block is not None, f"no ```sh block under {SECTION!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def tool_env() -> dict[str, str]:
    """The environment of a user whose PATH starts with this project's venv (after `activate`)."""
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "acp-codegen").is_file(), f"acp-codegen is not installed in {bin_dir}"
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "FORCE_COLOR"}
    }
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1", COLUMNS="200")
    return env


@dataclass(frozen=True)
class Ran:
    """One command of the README block and what it did."""

    command: str
    returncode: int
    output: str

    def describe(self) -> str:
        """For assertion messages."""
        return f"$ {self.command}\n(exit {self.returncode})\n{self.output}"


@dataclass(frozen=True)
class OneMinute:
    """The result of running the README section: where the projects are and what each line did."""

    workdir: Path
    ran: tuple[Ran, ...]

    @property
    def agent_dir(self) -> Path:
        """The scaffolded, installed agent project."""
        return self.workdir / "my-agent"

    @property
    def client_dir(self) -> Path:
        """The scaffolded, installed client project."""
        return self.workdir / "my-client"

    @property
    def agent_command(self) -> list[str]:
        """The agent's console script in its own venv."""
        return [str(self.agent_dir / ".venv" / "bin" / "my-agent")]

    @property
    def client_command(self) -> list[str]:
        """The client's console script in its own venv."""
        return [str(self.client_dir / ".venv" / "bin" / "my-client")]


@dataclass(frozen=True)
class Uninstalled:
    """Scaffolded projects run without installing them: this venv's Python (pydantic, rich and the
    remote extra are in it) with the project's directory on PYTHONPATH, as its own tests run."""

    agent_dir: Path
    client_dir: Path

    def python(self, project: Path) -> list[str]:
        """A command prefix running Python with `project`'s package importable."""
        return ["env", f"PYTHONPATH={project}", sys.executable]

    @property
    def agent_command(self) -> list[str]:
        """The agent, as `python -m my_agent`."""
        return [*self.python(self.agent_dir), "-m", "my_agent"]

    @property
    def client_command(self) -> list[str]:
        """The client, as `python -m my_client`."""
        return [*self.python(self.client_dir), "-m", "my_client"]


def run_project_tests(project: Path) -> subprocess.CompletedProcess[str]:
    """A scaffolded project's own test suite, with this venv's Python."""
    env = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def run_section(workdir: Path) -> OneMinute:
    """Run the README's "one minute" commands as written, one line at a time, in `workdir`."""
    env = tool_env()
    ran: list[Ran] = []
    for command in section_commands():
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        ran.append(Ran(command, done.returncode, done.stdout))
        if done.returncode != 0:
            break
    return OneMinute(workdir, tuple(ran))


def scaffold_quickly(base: Path) -> tuple[Path, Path]:
    """An agent and a client scaffolded with the defaults (not installed)."""
    for kind in ("agent", "client"):
        result = run_cli("scaffold", kind, base / f"my-{kind}")
        assert result.returncode == 0, result.describe()
    return base / "my-agent", base / "my-client"
