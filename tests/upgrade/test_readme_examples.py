"""The README's command examples that follow a schema, run as written (against the fake registry)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from upgrade_support import FakeNpm, run_cli

from acp_codegen.sources import project_root

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the fake registry publishes ../shared's revisions


def readme_command(prefix: str) -> list[str]:
    """The arguments of the README's first command line starting with `prefix` (comment dropped)."""
    text = (project_root() / "README.md").read_text(encoding="utf-8")
    line = next(
        m for m in re.findall(r"^acp-codegen .*$", text, re.MULTILINE) if m.startswith(prefix)
    )
    return shlex.split(re.sub(r"\s+# .*$", "", line))[1:]


def test_the_readme_diff_example_compares_old_to_new(fake_npm: FakeNpm, tmp_path: Path) -> None:
    args = readme_command("acp-codegen diff npm:")
    env = fake_npm.env(tmp_path / "cache")
    run = run_cli(*args, "--format", "json", env=env, cwd=tmp_path)
    assert run.returncode == 0, run.describe()  # nothing breaking from 2.2.0 to the pinned draft
    assert json.loads(run.stdout)["summary"]["breaking"] == 0
    swapped = run_cli("diff", args[2], args[1], env=env, cwd=tmp_path)  # the order the README had
    assert swapped.returncode == 1, swapped.describe()
