"""docs/library.md, run as written: every ```python block, in order, in one empty directory, against
the fake npm registry (requirement 5 of issue 34: the library API, documented, examples run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from upgrade_support import FakeNpm

from acp_codegen.sources import project_root

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the fake registry publishes ../shared's revisions

DOC = project_root() / "docs" / "library.md"


def blocks() -> list[tuple[str, str]]:
    """(file name from its first line, code) of every python block of the page."""
    found = re.findall(
        r"^```python\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL
    )
    named = []
    for code in found:
        match = re.match(r"# (\w+\.py): ", code)
        assert (
            match
        ), f"a block of {DOC.name} without a `# <file>.py: ...` first line: {code.splitlines()[0]!r}"
        named.append((match[1], code))
    return named


def test_every_example_of_the_library_page_runs(fake_npm: FakeNpm, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = fake_npm.env(tmp_path / "cache")
    env.pop("PYTHONPATH", None)
    ran = []
    for name, code in blocks():
        (work / name).write_text(code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, name],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{name}\n{done.stdout}\n{done.stderr}"
        ran.append((name, done.stdout))
    assert [name for name, _ in ran] == [
        "track.py",
        "compare.py",
        "upgrade.py",
        "scaffold.py",
        "errors.py",
    ]
    out = dict(ran)
    assert (
        out["track.py"].startswith("my_acp 42cfef92addf\n")
        and "PYTHONPATH=generated" in out["track.py"]
    )
    assert "('AvailableCommand', 'object', 'tagged union')" in out["compare.py"]
    assert out["upgrade.py"].startswith("my_acp outdated 2.4.0\n")
    upgraded = out["upgrade.py"].splitlines()
    assert "my-project/src/agent.py:1: AuthCapabilities -> ClientAuthCapabilities" in upgraded
    assert any(
        line.startswith(
            "my-project/src/agent.py:3: `AvailableCommand` was a class, is now a tagged union"
        )
        for line in upgraded
    ), upgraded
    assert (
        (tmp_path / "work" / "my-project" / "src" / "agent.py")
        .read_text(encoding="utf-8")
        .startswith("from my_acp import ClientAuthCapabilities, AvailableCommand\n")
    )
    assert out["errors.py"].startswith("error[unknown-target] ")


def test_the_library_names_are_the_apis() -> None:
    import acp_codegen
    from acp_codegen import api

    for name in (
        "generate",
        "compare",
        "compare_history",
        "scaffold_project",
        "track",
        "find_outdated",
        "upgrade_target",
        "migrate_code",
    ):
        assert getattr(acp_codegen, name) is getattr(api, name), name
        assert f"`{name}(" in DOC.read_text(
            encoding="utf-8"
        ), f"{name} is not documented in {DOC.name}"
