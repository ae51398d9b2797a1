"""Fixtures of the upgrade tests: a fake npm registry, and `-m network` tests skipped unless asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from upgrade_support import FakeNpm


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked `network` unless the `-m` expression names that marker."""
    if "network" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="talks to the real npm registry: run with -m network")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fake_npm(tmp_path: Path) -> FakeNpm:
    """A fake registry with the shared npm revisions published (2.4.1 re-publishes 2.4.0's files)."""
    npm = FakeNpm(tmp_path / "registry")
    for version in ("1.8.0", "2.0.0", "2.1.0", "2.2.0", "2.4.0"):
        npm.publish(version, f"npm-{version}")
    return npm
