"""Writes: generated packages get the modes a plain mkdir/open gives under the umask, and a
scaffold that fails part way leaves the directory as it found it.

Issue 13 findings: every generated package directory was mode 0700 whatever the umask (the
staging directory's mode was kept: other users could not import it), and `scaffold` left
README.md, .gitignore and pyproject.toml behind after a failed write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from generator_support import cli, generate, minimal


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """Run the block (and the subprocesses it starts) under `mask`."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_generated_package_follows_the_umask(tmp_path: Path, mask: int) -> None:
    with umask(mask):
        run, out = generate(tmp_path, minimal())
    assert run.returncode == 0, run.describe()
    package = out / "hostile"
    assert stat.S_IMODE(package.stat().st_mode) == 0o777 & ~mask
    for path in package.rglob("*"):
        expected = 0o777 if path.is_dir() else 0o666
        assert stat.S_IMODE(path.stat().st_mode) == expected & ~mask, path


def test_regenerating_keeps_following_the_umask(tmp_path: Path) -> None:
    """The swap replaces the package with a fresh directory: it too gets the umask's mode."""
    with umask(0o022):
        generate(tmp_path, minimal())
        schema = minimal()
        schema["title"] = "Changed"
        run, out = generate(tmp_path, schema)
    assert run.returncode == 0, run.describe()
    assert stat.S_IMODE((out / "hostile").stat().st_mode) == 0o755


def _tree(directory: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes() if p.is_file() else None
        for p in sorted(directory.rglob("*"))
    }


def test_failed_scaffold_writes_nothing(tmp_path: Path) -> None:
    """`my_agent` is a file where the project's package directory goes: the write fails after
    pyproject.toml, .gitignore and README.md, which must not stay behind."""
    project = tmp_path / "my-agent"
    project.mkdir()
    (project / "my_agent").write_text("in the way\n", encoding="utf-8")
    (project / "README.md").write_text("the user's own readme\n", encoding="utf-8")
    before = _tree(project)
    run = cli("scaffold", "agent", "my-agent", "--force", cwd=tmp_path)
    assert run.returncode == 2, run.describe()
    assert run.stderr.startswith("error[write-failed] my-agent: "), run.describe()
    assert "Traceback" not in run.stderr
    assert _tree(project) == before


def test_failed_scaffold_removes_the_directories_it_created(tmp_path: Path) -> None:
    """`tests` is a file of the user's: the write fails after the package directory `other/`
    and its first files were created, and all of them go again."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "tests").write_text("a file where a directory goes\n", encoding="utf-8")
    before = _tree(other)
    run = cli("scaffold", "agent", "other", "--force", cwd=tmp_path)
    assert run.returncode == 2, run.describe()
    assert _tree(other) == before
