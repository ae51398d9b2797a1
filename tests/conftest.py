"""Shared fixtures: project paths, the pins, the shared schema directory, fresh generated output.

Helpers that tests import (running the CLI, file trees, the minimal schema) live in cli_support.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import GENERATED, MINIMAL_SCHEMA, ROOT, run_cli

from acp_codegen.pins import PinFile, default_pin_path, load_pins
from acp_codegen.sources import default_cache_dir, default_shared_dir

# Modules holding the suite's longest tests (tens of seconds each: venv installs, type checks of
# whole projects), run first. xdist hands tests out in collection order, so a long test collected
# last (test_wheels.py sorts last) ran alone at the end while the other worker idled; started first,
# the short tests fill in around them. Whole modules move, so their module fixtures are made once.
RUN_FIRST = (
    "tests/test_wheels.py",
    "tests/scaffold/test_scaffold_projects.py",
    "tests/upgrade/test_migrate.py",
    "tests/bindings/test_typing.py",
    "tests/test_golden.py",
    "tests/scaffold/test_scaffold_cli.py",
)


def _run_order(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return RUN_FIRST.index(path) if path in RUN_FIRST else len(RUN_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the modules of the longest tests first (`RUN_FIRST`), and skip the tests marked `slow`
    (end-to-end variants that the CI budget of the README's test command cannot hold) unless
    `nox -s slow` asks for them (ACP_SLOW_TESTS=1 or `-m slow`)."""
    items.sort(key=_run_order)  # stable: the order within and among the other modules stays
    if os.environ.get("ACP_SLOW_TESTS") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run `nox -s slow`")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache per test process, shared by the tests that type-check: the stdlib,
    pydantic, the runtime and the committed packages are analysed once per process instead of once
    per test. mypy checks every cached module against its file (path, size, hash) and rechecks
    modules that had errors, so sharing cannot hide a finding."""
    return tmp_path_factory.mktemp("mypy-cache")


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


@pytest.fixture
def minimal_schema() -> dict[str, Any]:
    """A fresh deep copy of a minimal valid ACP-like schema."""
    copied: dict[str, Any] = json.loads(json.dumps(MINIMAL_SCHEMA))
    return copied
