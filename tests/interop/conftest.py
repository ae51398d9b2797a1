"""Interop fixtures: node, and the reference SDK installed into tests/interop/node_modules.

The SDK version is pinned exactly in tests/interop/package.json. `npm install` runs at most once
per session, and only when the installed copy is missing or is not the pinned version; without
`node` or `npm` on PATH the interop tests are skipped (with the reason), never failed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

INTEROP_DIR = Path(__file__).resolve().parent
SDK_NAME = "@agentclientprotocol/sdk"
NPM_INSTALL_TIMEOUT = 300


def pinned_sdk_version() -> str:
    """The exact SDK version of tests/interop/package.json."""
    manifest = json.loads((INTEROP_DIR / "package.json").read_text(encoding="utf-8"))
    version: str = manifest["dependencies"][SDK_NAME]
    return version


def installed_sdk_version() -> str | None:
    """The version of the SDK in tests/interop/node_modules, or None when it is not installed."""
    path = INTEROP_DIR / "node_modules" / SDK_NAME / "package.json"
    try:
        version: str = json.loads(path.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version


def _outdated() -> bool:
    """Whether a dependency of tests/interop/package.json is missing or not at its pinned version
    (the SDK, and the other peers, such as `@thinkwell/conductor`)."""
    manifest = json.loads((INTEROP_DIR / "package.json").read_text(encoding="utf-8"))
    for name, version in manifest["dependencies"].items():
        path = INTEROP_DIR / "node_modules" / name / "package.json"
        try:
            if json.loads(path.read_text(encoding="utf-8"))["version"] != version:
                return True
        except (OSError, ValueError, KeyError):
            return True
    return False


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    # Several pytest processes (xdist workers, parallel CI jobs) may start at once: only one
    # runs npm, the others wait and then find the SDK installed.
    modules = INTEROP_DIR / "node_modules"
    modules.mkdir(exist_ok=True)
    with (modules / ".acp-codegen-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def node() -> str:
    """Path of `node`, once the pinned SDK is installed (skips when node or npm is missing)."""
    node_path = shutil.which("node")
    npm_path = shutil.which("npm")
    missing = [name for name, path in (("node", node_path), ("npm", npm_path)) if path is None]
    if missing or node_path is None or npm_path is None:
        pytest.skip(
            f"interop tests with {SDK_NAME} need node and npm on PATH "
            f"(not found: {', '.join(missing)})"
        )
    pinned = pinned_sdk_version()
    with _install_lock():
        if _outdated():
            try:
                done = subprocess.run(
                    [npm_path, "install", "--no-audit", "--no-fund"],
                    cwd=INTEROP_DIR,
                    capture_output=True,
                    text=True,
                    timeout=NPM_INSTALL_TIMEOUT,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                pytest.fail(f"`npm install` in {INTEROP_DIR} timed out: {exc}")
            if done.returncode != 0:
                pytest.fail(
                    f"`npm install --no-audit --no-fund` in {INTEROP_DIR} exited "
                    f"{done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
                )
    installed = installed_sdk_version()
    assert installed == pinned, f"{SDK_NAME} {installed} installed, {pinned} pinned"
    return node_path


@pytest.fixture(scope="session")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A scaffolded two-version agent and a scaffolded client, made once per test process and
    shared by the interop modules (they run them from their directories and never write there)."""
    from tests.interop.test_versions_interop import scaffold

    base = tmp_path_factory.mktemp("interop-projects")
    scaffold("agent", base / "interop_agent")
    scaffold("client", base / "interop_client")
    return {"agent": base / "interop_agent", "client": base / "interop_client"}
