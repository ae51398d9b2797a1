"""What the interop tests of our chains share: where things are, our proxy and agent scripts
(tests/proxies) as commands, an `acp-conductor` command line, and the environment they import
from."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parents[1]
PROXIES = ROOT / "tests" / "proxies"
CONDUCTOR = str(Path(sys.executable).with_name("acp-conductor"))


def ours(name: str) -> str:
    """The command line (one string, as `--proxy` and `--agent` take it) of a tests/proxies script."""
    return shlex.join([sys.executable, str(PROXIES / name)])


def conductor(agent: str, *proxies: str) -> list[str]:
    """`acp-conductor` with `proxies` (command lines, in order from the client) before `agent`."""
    command = [CONDUCTOR]
    for proxy in proxies:
        command += ["--proxy", proxy]
    return [*command, "--agent", agent, "--grace", "2"]


def scripts_env() -> dict[str, str]:
    """Our environment, with the generated packages and tests/proxies importable."""
    path = os.pathsep.join([str(ROOT / "generated"), str(PROXIES)])
    return {**os.environ, "PYTHONPATH": path}
