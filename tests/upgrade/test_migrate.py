"""`acp-codegen migrate` on small sample projects: after it, they type-check against the newer bindings.

Each sample (`sample_<pair>/app/`) is written against the bindings of the older revision and
type-checks there (`mypy --strict`); against the newer bindings it does not, until `migrate`
rewrites it. The parts that use removed things are listed for a person, never rewritten.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from upgrade_support import HERE, run_cli, tree

from acp_codegen.sources import default_shared_dir

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the schema revisions of ../shared (skips without)

PAIRS = {
    "npm200": (
        "npm-2.0.0",
        "npm-2.1.0",
        ["caps.py"],
        ["chunks.py:10: attribute `SessionMessageChunk.sender_session_id` removed"],
    ),
    "7b8a": (
        "git-7b8a7094",
        "git-a57b538d",
        ["renames.py"],
        [
            "removals.py:5: class `LoadSessionRequest` was removed from the bindings: remove or replace its uses",
            "removals.py:11: `Agent.session_load` is gone from the bindings: nobody calls it any more",
            "removals.py:18: attribute `InitializeResponse.agent_info` removed",
        ],
    ),
}


def _schema(revision: str) -> str:
    return str(default_shared_dir() / revision / "schema.unstable.json")


def _bindings(tmp: Path, revision: str) -> Path:
    out = tmp / revision
    run = run_cli(
        "generate",
        "--schema",
        _schema(revision),
        "--package",
        "acp_bindings",
        "--out",
        out,
        "-q",
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.describe()
    return out


def _mypy(bindings: Path, cache: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on the sample files only (the bindings are followed, their own errors silenced)."""
    env = {**os.environ, "MYPYPATH": str(bindings)}
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--follow-imports=silent",
        "--cache-dir",
        str(cache),
        *map(str, files),
    ]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize(
    "pair",
    # the first pair in the README's test command, the others in `nox -s slow` (CI's budget)
    [
        pytest.param(p, marks=() if i == 0 else pytest.mark.slow)
        for i, p in enumerate(sorted(PAIRS))
    ],
)
def test_migrate_makes_the_sample_type_check(pair: str, tmp_path: Path, mypy_cache: Path) -> None:
    old, new, renamed_only, for_a_person = PAIRS[pair]
    sample = tmp_path / "sample"
    shutil.copytree(HERE / f"sample_{pair}", sample)
    old_bindings, new_bindings = _bindings(tmp_path, old), _bindings(tmp_path, new)
    checked = [sample / "app" / name for name in renamed_only]
    before = _mypy(old_bindings, mypy_cache, *sorted((sample / "app").glob("*.py")))
    assert before.returncode == 0, f"the sample must be valid against {old}:\n{before.stdout}"
    broken = _mypy(new_bindings, mypy_cache, *checked)
    assert (
        broken.returncode == 1
    ), f"the sample should not type-check against {new} before migrating"

    untouched = tree(sample)
    check = run_cli(
        "migrate",
        sample,
        "--from",
        _schema(old),
        "--to",
        _schema(new),
        "--check",
        env=dict(os.environ),
    )
    assert check.returncode == 1 and tree(sample) == untouched, check.describe()
    assert "would rewrite" in check.stdout

    run = run_cli(
        "migrate", sample, "--from", _schema(old), "--to", _schema(new), env=dict(os.environ)
    )
    assert run.returncode == 1, run.describe()  # some uses still need a person
    people = run.stdout.split("needs a person:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    shown = [line.removeprefix(f"{sample / 'app'}/") for line in people]
    assert set(for_a_person) <= set(shown), shown
    after = _mypy(new_bindings, mypy_cache, *checked)
    assert after.returncode == 0, f"still failing after migrate:\n{after.stdout}\n{run.stdout}"

    again = run_cli(
        "migrate",
        sample,
        "--from",
        _schema(old),
        "--to",
        _schema(new),
        "--check",
        env=dict(os.environ),
    )
    assert "would rewrite 0 reference(s) in 0 file(s)" in again.stdout, again.describe()


def test_comments_and_layout_survive(tmp_path: Path) -> None:
    sample = tmp_path / "sample"
    shutil.copytree(HERE / "sample_7b8a", sample)
    run_cli(
        "migrate",
        sample,
        "--from",
        _schema("git-7b8a7094"),
        "--to",
        _schema("git-a57b538d"),
        env=dict(os.environ),
    )
    original = (
        (HERE / "sample_7b8a" / "app" / "renames.py").read_text(encoding="utf-8").splitlines()
    )
    migrated = (sample / "app" / "renames.py").read_text(encoding="utf-8").splitlines()
    assert len(original) == len(migrated)
    assert "from acp_bindings import (  # the generated package" in migrated
    assert '    return f"{plan.plan_id} at {plan.uri}"  # the id is the plan\'s' in migrated
    changed = [i for i, (a, b) in enumerate(zip(original, migrated, strict=True)) if a != b]
    assert (
        len(changed) == 19
    ), changed  # only the lines naming a renamed class, attribute or handler
    assert (sample / "app" / "removals.py").read_text(encoding="utf-8") == (
        HERE / "sample_7b8a" / "app" / "removals.py"
    ).read_text(encoding="utf-8")


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n", encoding="utf-8")
    run = run_cli(
        "migrate",
        broken,
        "--from",
        _schema("npm-2.0.0"),
        "--to",
        _schema("npm-2.1.0"),
        env=dict(os.environ),
    )
    assert run.returncode == 2 and len(run.stderr.splitlines()) == 1, run.describe()
    assert run.stderr.startswith(f"error[migrate-failed] {broken}: not valid Python")
    run = run_cli(
        "migrate",
        tmp_path / "missing",
        "--from",
        _schema("npm-2.0.0"),
        "--to",
        _schema("npm-2.1.0"),
        env=dict(os.environ),
    )
    assert run.returncode == 2 and "error[file-not-found]" in run.stderr, run.describe()
