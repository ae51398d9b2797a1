"""Fixtures of the upgrade tests: the fake npm registry, serving the shared schema revisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from upgrade_support import FakeNpm, published_registry


@pytest.fixture
def fake_npm(tmp_path: Path, shared_dir: Path) -> FakeNpm:
    """A fake registry with the shared npm revisions published (skips without them)."""
    return published_registry(tmp_path)
