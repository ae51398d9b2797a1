"""The toolkit's own distribution ships every package of `codegen` (setuptools lists them by
hand in pyproject.toml: a package missing there is missing from the wheel, not from an
editable install, so nothing else would notice)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_lists_every_package_of_the_toolkit() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    found = sorted(
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "codegen").rglob("__init__.py")
        if "__pycache__" not in init.parts
    )
    assert sorted(listed) == found
