"""Files keep the mode the umask gives (issue 32, requirement 5): `scaffold` wrote its project
files 0600 under umask 022 (they went through `mkstemp`), and so did the download cache; an
existing file rewritten in place (the pin file on `upgrade`) keeps its own mode. Every write is
the CLI's, in a subprocess whose umask the test sets."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from upgrade_support import FakeNpm, project_copy

from acp_codegen.sources import project_root


def _cli(mask: int, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {**env, "PYTHONPATH": str(project_root()), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "acp_codegen", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        preexec_fn=lambda: os.umask(mask),  # the umask of the CLI only
    )


def _modes(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in root.rglob("*")
        if "__pycache__" not in p.parts
    }


def test_scaffold_files_get_the_umask_mode(fake_npm: FakeNpm, tmp_path: Path) -> None:
    mask = 0o022  # the case: every file was 0600
    project, cache = tmp_path / "client", tmp_path / "cache"
    run = _cli(mask, tmp_path, fake_npm.env(cache), "scaffold", "client", str(project))
    assert run.returncode == 0, run.stderr
    modes = _modes(project)
    files = {name: mode for name, mode in modes.items() if (project / name).is_file()}
    dirs = {name: mode for name, mode in modes.items() if (project / name).is_dir()}
    assert "README.md" in files and "pyproject.toml" in files and "schema/pins.toml" in files
    assert set(files.values()) == {0o666 & ~mask}, sorted(files.items())
    assert set(dirs.values()) == {0o777 & ~mask}
    cached = [mode for name, mode in _modes(cache).items() if (cache / name).is_file()]
    assert set(cached) <= {0o666 & ~mask}


def test_upgrade_keeps_the_pin_file_mode_and_reports_get_the_umask(
    fake_npm: FakeNpm, tmp_path: Path
) -> None:
    project = project_copy(tmp_path / "project")
    pins = project / "schema" / "pins.toml"
    pins.chmod(0o640)  # not what the umask (022) gives: kept, not re-derived
    before = pins.read_bytes()
    env = fake_npm.env(tmp_path / "cache")
    args = ("upgrade", "acp_v2_draft", "--pins", "schema/pins.toml", "--report", "report.md")
    run = _cli(0o022, project, env, *args)
    assert run.returncode == 0, run.stderr
    assert pins.read_bytes() != before  # rewritten, in place of the old file
    assert stat.S_IMODE(pins.stat().st_mode) == 0o640
    assert stat.S_IMODE((project / "report.md").stat().st_mode) == 0o644
    assert [p.name for p in pins.parent.iterdir() if p.name.endswith(".tmp")] == []
