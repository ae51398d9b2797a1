"""What a revision argument names (acp_codegen.revisions), through every command that takes one.

Run where the generated packages themselves lie (`acp_v1/`, `acp_v2_draft/`, as the scaffold's and
`init`'s layouts put them), a target name is the target: a directory is never a schema. A bare
word that is both a pinned target and a file is refused in one line saying how to pick one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT

from acp_codegen.pins import PinFile

PEERS = ROOT / "tests" / "conformance" / "peers"
FAST = ["--timeout", "3", "--turn-timeout", "5", "--exit-timeout", "3"]


def cli(cwd: Path, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    """`python -m acp_codegen ARGS` run in `cwd` (outside any project: the toolkit's pins)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "acp_codegen", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def beside_packages(tmp_path: Path, pinned_sources: PinFile) -> Path:
    """A directory holding directories named like the pinned targets."""
    for name in ("acp_v1", "acp_v2_draft", "acp_v2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("", encoding="utf-8")
    return tmp_path


def test_diff_takes_target_names_beside_their_packages(beside_packages: Path) -> None:
    done = cli(beside_packages, "diff", "--format", "json", "acp_v2", "acp_v2_draft")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert (report["old"]["label"], report["new"]["label"]) == ("acp_v2", "acp_v2_draft"), report


def test_migrate_takes_target_names_beside_their_packages(beside_packages: Path) -> None:
    code = beside_packages / "src" / "agent.py"
    code.parent.mkdir()
    code.write_text("import acp_v1\n", encoding="utf-8")
    done = cli(beside_packages, "migrate", "src", "--from", "acp_v1", "--to", "acp_v1", "--check")
    assert done.returncode == 0, done.stderr
    assert "would rewrite 0 reference(s)" in done.stdout


def test_the_probe_switches_to_v1_and_check_transcript_reads_it_beside_the_packages(
    beside_packages: Path,
) -> None:
    transcript = beside_packages / "t.jsonl"
    done = cli(
        beside_packages,
        "probe",
        "agent",
        "--format",
        "json",
        "--transcript",
        transcript,
        *FAST,
        "--",
        sys.executable,
        PEERS / "fake_agent.py",
        "--v1",
    )
    assert done.returncode == 0, done.stderr
    assert (
        json.loads(done.stdout)["schema"] == "acp_v1 (unstable)"
    )  # v1 is checked against its pinned unstable schema
    # the checker follows the negotiation to the v1 pin, and takes a target name for --schema
    checked = cli(beside_packages, "check-transcript", "--format", "json", transcript)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    fixed = cli(
        beside_packages,
        "check-transcript",
        "--format",
        "json",
        "--schema",
        "acp_v2_draft",
        transcript,
    )
    assert fixed.returncode in (0, 1) and json.loads(fixed.stdout), fixed.stderr


def test_a_name_that_is_a_target_and_a_file_is_one_line_saying_how_to_choose(
    beside_packages: Path,
) -> None:
    package = beside_packages / "acp_v1"
    (package / "__init__.py").unlink()
    package.rmdir()
    package.write_bytes(b"{}")  # now a file of the target's name
    done = cli(beside_packages, "diff", "acp_v1", "acp_v2")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error[ambiguous-revision] acp_v1:")
    assert "pin:acp_v1" in lines[0] and "./acp_v1" in lines[0]
    # either choice then works: the explicit target, and the file (here not a schema: its own error)
    assert (
        cli(beside_packages, "diff", "--format", "json", "pin:acp_v1", "pin:acp_v1").returncode == 0
    )
    as_file = cli(beside_packages, "diff", "./acp_v1", "acp_v2")
    assert as_file.returncode == 2 and "error[not-acp] ./acp_v1" in as_file.stderr, as_file.stderr


def test_an_unknown_word_lists_the_targets(tmp_path: Path) -> None:
    done = cli(tmp_path, "diff", "nope", "acp_v1")
    assert done.returncode == 2
    assert "'nope' is neither a file" in done.stderr and "acp_v1" in done.stderr


def test_a_pinned_target_spec_is_not_a_source(tmp_path: Path) -> None:
    done = cli(tmp_path, "generate", "--schema", "pin:acp_v1", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "error[bad-source]" in done.stderr and "names a pinned target" in done.stderr


def test_diff_shows_its_loads_on_a_terminal_only(beside_packages: Path) -> None:
    """Long steps show rich's progress on a terminal's stderr (item 7 of issue 34), never in a pipe."""
    from test_cli_generate import run_cli_tty

    status, text = run_cli_tty(
        "diff", "--format", "json", "acp_v2", "acp_v2_draft", cwd=beside_packages
    )
    assert status == 0, text
    assert "loading acp_v2" in text and "loading acp_v2_draft" in text, text
    piped = cli(beside_packages, "diff", "--format", "json", "acp_v2", "acp_v2_draft")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
