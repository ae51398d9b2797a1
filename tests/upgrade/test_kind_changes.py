"""Definitions that change kind (class to union, union to class, alias to union or enum) and aliases
that stand for another type: `upgrade`'s report names each, with `file:line` of every use in the
user's code, and `migrate` lists every such use for a person (requirement 6 of issue 34).

The pairs are real revisions of the shared schema directory: `AvailableCommand` became a tagged
union in npm-2.1.0 (npm-2.0.0 -> npm-2.4.0, and back for union to class); `AvailableCommandInput`
(alias to union) and `Role` (alias to enum) in git-a57b538d; `RequestId`'s alias lost `null` in
npm-2.1.0.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from upgrade_support import run_cli

from acp_codegen.sources import default_shared_dir

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the schema revisions of ../shared (skips without)

FILE = "schema.unstable.json"
USER_CODE = """\
import acp_v2_draft as acp
from acp_v2_draft import AvailableCommand, RequestId


def commands() -> list[AvailableCommand]:
    return [acp.AvailableCommand(name="plan", description="make a plan")]


def same(request: RequestId) -> RequestId:
    return request
"""


def _project(tmp_path: Path, old: str) -> Path:
    """A project pinning `draft` to a shared revision, with the user code above in src/."""
    old_file = default_shared_dir() / old / FILE
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "pins.toml").write_text(
        f'[[target]]\nname = "draft"\npackage = "acp_v2_draft"\nsource = "{old_file}"\n'
        f'sha256 = "{hashlib.sha256(old_file.read_bytes()).hexdigest()}"\n',
        encoding="utf-8",
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "agent.py").write_text(USER_CODE, encoding="utf-8")
    return tmp_path


def _report(project: Path, new: str, *extra: str) -> str:
    env = {**os.environ, "ACP_CODEGEN_CACHE": str(project / ".cache" / "acp-codegen")}
    run = run_cli(
        "upgrade",
        "draft",
        "--to",
        str(default_shared_dir() / new / FILE),
        "--dry-run",
        *extra,
        env=env,
        cwd=project,
    )
    assert run.returncode == 0, run.describe()
    return run.stdout


def _entries(report: str, heading: str) -> list[str]:
    match = re.search(
        rf"^### {re.escape(heading)} \(\d+\): .*\n\n((?:- .+\n)+)", report, re.MULTILINE
    )
    assert match, report
    return [line[2:] for line in match.group(1).splitlines()]


def test_class_to_union_is_named_with_every_use_in_the_users_code(tmp_path: Path) -> None:
    report = _report(_project(tmp_path, "npm-2.0.0"), "npm-2.4.0")
    (entry,) = [e for e in _entries(report, "Kind changed") if e.startswith("`AvailableCommand`")]
    assert entry.startswith(
        "`AvailableCommand`: was a class, is now a tagged union of `AvailableCommandCommand`, "
        "`UnknownAvailableCommand`: it cannot be called"
    ), entry
    assert "construct a variant (`AvailableCommandCommand(...)`)" in entry
    retyped = _entries(report, "Alias retyped")
    assert any(
        e.startswith("`RequestId`: now stands for another type") and "null" in e for e in retyped
    ), retyped
    code = report.split("## Your code\n", 1)[1]
    uses = re.findall(r"^    (src/agent\.py:\d+): `(\w+)`", code, re.MULTILINE)
    assert uses == [
        ("src/agent.py:2", "AvailableCommand"),
        ("src/agent.py:2", "RequestId"),
        ("src/agent.py:5", "AvailableCommand"),
        ("src/agent.py:6", "AvailableCommand"),
        ("src/agent.py:9", "RequestId"),
    ], code
    assert "--to draft" in code
    assert "## Your code" not in _report(tmp_path, "npm-2.4.0", "--no-code")


def test_union_to_class_is_named(tmp_path: Path) -> None:
    report = _report(_project(tmp_path, "npm-2.4.0"), "npm-2.0.0")
    (entry,) = [e for e in _entries(report, "Kind changed") if e.startswith("`AvailableCommand`")]
    assert entry.startswith(
        "`AvailableCommand`: was a tagged union, is now a class: construct `AvailableCommand(...)`"
    )


def test_aliases_that_became_a_union_or_an_enum_are_named(tmp_path: Path) -> None:
    entries = _entries(
        _report(_project(tmp_path, "git-7b8a7094"), "git-a57b538d", "--no-code"), "Kind changed"
    )
    assert any(
        e.startswith("`AvailableCommandInput`: was an alias, is now a tagged union of")
        for e in entries
    ), entries
    assert any(
        e.startswith(
            ("`Role`: was an alias, is now an open enum", "`Role`: was an alias, is now an enum")
        )
        for e in entries
    ), entries


def test_migrate_lists_every_use_of_a_kind_change_for_a_person(tmp_path: Path) -> None:
    project = _project(tmp_path, "npm-2.0.0")
    env = {**os.environ, "ACP_CODEGEN_CACHE": str(project / ".cache" / "acp-codegen")}
    run = run_cli(
        "migrate",
        "src",
        "--from",
        "draft",
        "--to",
        str(default_shared_dir() / "npm-2.4.0" / FILE),
        "--check",
        env=env,
        cwd=project,
    )
    assert run.returncode == 1, run.describe()
    people = run.stdout.split("needs a person:\n", 1)[1]
    assert (
        "src/agent.py:6: `AvailableCommand` was a class, is now a tagged union" in people
    )  # acp.AvailableCommand(...)
    assert "src/agent.py:9: `RequestId` now stands for another type" in people
    assert run.stdout.rstrip().endswith("5 use(s) need a person"), run.stdout
