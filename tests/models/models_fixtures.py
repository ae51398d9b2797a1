"""Fixtures of the model tests: the committed generated packages.

The three pinned targets are imported from `generated/` (as users import them). Schema files of
other revisions are rendered on demand by the tests that need them. Test modules import these
fixtures by name (a `conftest.py` here would shadow the `conftest` module other test
directories import helpers from).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest
from models_facts import GENERATED, PINNED

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


def _package(name: str) -> ModuleType:
    if not (GENERATED / name / "__init__.py").is_file():
        pytest.fail(f"generated/{name} is missing: run `acp-codegen generate`")
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def draft() -> ModuleType:
    """`acp_v2_draft`: npm 2.4.0 schema/v2/schema.unstable.json."""
    return _package("acp_v2_draft")


@pytest.fixture(scope="session")
def stable() -> ModuleType:
    """`acp_v2`: npm 2.4.0 schema/v2/schema.json."""
    return _package("acp_v2")


@pytest.fixture(scope="session")
def v1() -> ModuleType:
    """`acp_v1`: npm 2.4.0 schema/v1/schema.json."""
    return _package("acp_v1")


@pytest.fixture(scope="session", params=sorted(PINNED))
def pinned(request: pytest.FixtureRequest) -> ModuleType:
    """Each pinned package in turn."""
    return _package(request.param)
