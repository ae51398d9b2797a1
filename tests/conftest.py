"""Shared fixtures: project paths, the shared schema directory, and running the CLI.

The CLI is always run as a subprocess (`sys.executable -m codegen ...`) so that tests see what a
user sees: exit status, stdout and stderr, with stdout not a terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.pins import PinFile, default_pin_path, load_pins
from codegen.sources import default_cache_dir, default_shared_dir, project_root

ROOT = project_root()
GENERATED = ROOT / "generated"
# Directories that tools leave inside generated/ and that are never part of a package.
IGNORED_PARTS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})

if os.environ.get("ACP_RUNTIME_IN_PLACE") == "1":  # `nox -s coverage`: see tests/runtime_in_place.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import runtime_in_place

    runtime_in_place.install()


@dataclass(frozen=True)
class CliResult:
    """What one CLI run did."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together (for "no traceback anywhere" checks)."""
        return self.stdout + self.stderr

    def describe(self) -> str:
        """For assertion messages."""
        return f"`acp-codegen {' '.join(self.args)}` exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> CliResult:
    """Run `python -m codegen ARGS` in a subprocess and capture its output."""
    merged = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    merged.pop("FORCE_COLOR", None)
    merged.update(env or {})
    argv = tuple(str(a) for a in args)
    done = subprocess.run(
        [sys.executable, "-m", "codegen", *argv],
        cwd=cwd or ROOT,
        env=merged,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(argv, done.returncode, done.stdout, done.stderr)


def tree_bytes(directory: Path) -> dict[str, bytes]:
    """relative path -> bytes of every file under `directory` (tool caches left out)."""
    if not directory.is_dir():
        return {}
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not IGNORED_PARTS.intersection(p.relative_to(directory).parts)
    }


def tree_state(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Like `tree_bytes`, plus each file's mtime in ns (to see that nothing was rewritten)."""
    return {
        name: (data, (directory / name).stat().st_mtime_ns)
        for name, data in tree_bytes(directory).items()
    }


@pytest.fixture(scope="session")
def project_root_dir() -> Path:
    """The project's root directory."""
    return ROOT


@pytest.fixture(scope="session")
def generated_dir() -> Path:
    """The committed generated/ directory."""
    return GENERATED


@pytest.fixture(scope="session")
def pins() -> PinFile:
    """The project's pin file."""
    return load_pins(default_pin_path())


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared schema revisions (skips the test when the directory is absent)."""
    path = default_shared_dir()
    if not (path / "manifest.json").is_file():
        pytest.skip(f"shared schema directory {path} is absent (set ACP_CODEGEN_SHARED)")
    return path


@pytest.fixture(scope="session")
def manifest(shared_dir: Path) -> dict[str, Any]:
    """The parsed manifest.json of the shared directory."""
    data: dict[str, Any] = json.loads((shared_dir / "manifest.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def pinned_sources(pins: PinFile) -> PinFile:
    """The pins, once every pinned schema is available offline (cache or shared directory).

    Skips when neither holds them: generating would then need the npm registry.
    """
    cache = default_cache_dir()
    shared = default_shared_dir()
    missing = [pin.name for pin in pins if not (cache / pin.sha256).is_file()]
    if missing and not (shared / "manifest.json").is_file():
        pytest.skip(
            f"pinned schemas of {', '.join(missing)} are neither cached in {cache} nor in the "
            f"shared directory {shared} (set ACP_CODEGEN_SHARED)"
        )
    return pins


@pytest.fixture(scope="session")
def fresh_generated(tmp_path_factory: pytest.TempPathFactory, pinned_sources: PinFile) -> Path:
    """Every pinned target generated into a temporary directory by `acp-codegen generate`."""
    out = tmp_path_factory.mktemp("fresh") / "generated"
    result = run_cli("generate", "--out", out)
    assert result.returncode == 0, result.describe()
    return out


MINIMAL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Minimal ACP",
    "$defs": {
        "PingRequest": {
            "description": "Ask the agent whether it is alive.",
            "type": "object",
            "x-method": "ping",
            "x-side": "agent",
            "properties": {"bar": {"type": "string"}},
            "required": ["bar"],
        },
        "PingResponse": {
            "type": "object",
            "x-method": "ping",
            "x-side": "agent",
            "properties": {"ok": {"type": "boolean"}},
        },
    },
}


@pytest.fixture
def minimal_schema() -> dict[str, Any]:
    """A fresh deep copy of a minimal valid ACP-like schema."""
    copied: dict[str, Any] = json.loads(json.dumps(MINIMAL_SCHEMA))
    return copied


def write_json(path: Path, document: Any) -> Path:
    """Write a JSON document (pretty, stable) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path
