"""What the proxy tests share: the commands of a chain and a raw client that records what
reaches it (the JSON values as they arrive, nothing read into models)."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GENERATED = ROOT / "generated"
CONDUCTOR = str(Path(sys.executable).with_name("acp-conductor"))
PERMISSION = {"outcome": {"outcome": "selected", "optionId": "allow"}, "_meta": {"from": "client"}}


def script(name: str) -> list[str]:
    """The command line of one of this directory's scripts."""
    return [sys.executable, str(HERE / name)]


def chain_env(**extra: str) -> dict[str, str]:
    """Our environment, with the generated packages and this directory importable."""
    path = os.pathsep.join([str(GENERATED), str(HERE)])
    return {**os.environ, "PYTHONPATH": path, **extra}


def conductor(proxies: list[str], agent: str = "mirror_agent.py") -> list[str]:
    """`acp-conductor` over this directory's `proxies` and `agent` scripts."""
    command = [CONDUCTOR]
    for name in proxies:
        command += ["--proxy", shlex.join(script(name))]
    return [*command, "--agent", shlex.join(script(agent)), "--grace", "2"]


class RawClient:
    """A client handler that answers permission requests and records every notification."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()

    async def unlisted_request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        return PERMISSION

    async def unlisted_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))
        self.arrived.set()

    async def wait_for(self, method: str, timeout: float = 10) -> Any:
        """The params of the first notification `method` received (waiting for it)."""
        async with asyncio.timeout(timeout):
            while True:
                for name, params in self.notes:
                    if name == method:
                        return params
                self.arrived.clear()
                await self.arrived.wait()
