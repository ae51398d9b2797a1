"""Remote-transport fixtures: node with the reference SDK (and `ws`) installed into
tests/remote/node_modules, pinned exactly in tests/remote/package.json.

`npm install` runs at most once per session, only when the installed SDK is not the pinned one;
without node or npm on PATH the interop tests are skipped (with the reason), never failed.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

REMOTE_DIR = Path(__file__).resolve().parent
SDK_NAME = "@agentclientprotocol/sdk"
NPM_INSTALL_TIMEOUT = 300


def pytest_configure(config: pytest.Config) -> None:
    """The `hostile` marker: floods and slow peers at scale (`nox -s hostile`, `-m hostile`)."""
    config.addinivalue_line(
        "markers",
        "hostile: the remote server against floods and slow peers at scale; minutes of load, "
        "run with `-m hostile` (`nox -s hostile`), skipped otherwise",
    )


def _installed(name: str) -> str | None:
    try:
        manifest = json.loads(
            (REMOTE_DIR / "node_modules" / name / "package.json").read_text("utf-8")
        )
    except (OSError, ValueError):
        return None
    version = manifest.get("version")
    return version if isinstance(version, str) else None


@pytest.fixture(scope="session")
def node() -> str:
    """Path of `node` once the pinned packages of tests/remote/package.json are installed."""
    node_path, npm_path = shutil.which("node"), shutil.which("npm")
    if node_path is None or npm_path is None:
        pytest.skip("remote interop tests need node and npm on PATH")
    pinned: dict[str, str] = json.loads((REMOTE_DIR / "package.json").read_text("utf-8"))[
        "dependencies"
    ]
    (REMOTE_DIR / "node_modules").mkdir(exist_ok=True)
    with (REMOTE_DIR / "node_modules" / ".acp-codegen-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if any(_installed(name) != version for name, version in pinned.items()):
            done = subprocess.run(
                [npm_path, "install", "--no-audit", "--no-fund"],
                cwd=REMOTE_DIR,
                capture_output=True,
                text=True,
                timeout=NPM_INSTALL_TIMEOUT,
                check=False,
            )
            if done.returncode != 0:
                pytest.fail(
                    f"`npm install` in {REMOTE_DIR} exited {done.returncode}\n{done.stderr}"
                )
    assert _installed(SDK_NAME) == pinned[SDK_NAME]
    return node_path
