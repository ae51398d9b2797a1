"""`acp-codegen upgrade` end to end in a temporary copy of the project, against a fake `npm`."""

from __future__ import annotations

from pathlib import Path

import pytest
from upgrade_support import (
    GOLDEN,
    PINS_2_2,
    STALE_MARK,
    FakeNpm,
    project_copy,
    run_cli,
    tree,
)

from acp_codegen.pins import load_pins
from acp_codegen.sources import project_root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A temporary project pinned to npm-2.2.0 with a stale generated/acp_v2_draft."""
    return project_copy(tmp_path / "project")


def _upgrade(npm: FakeNpm, project: Path, *args: str) -> tuple[int, str, str]:
    run = run_cli(
        "upgrade",
        "acp_v2_draft",
        "--pins",
        "schema/pins.toml",
        *args,
        env=npm.env(project.parent / "cache"),
        cwd=project,
    )
    assert "Traceback" not in run.stderr, run.describe()
    return run.returncode, run.stdout, run.stderr


def test_upgrade_to_newest_matches_the_goldens(fake_npm: FakeNpm, project: Path) -> None:
    before = tree(project / "generated")
    code, out, err = _upgrade(fake_npm, project, "--report", "report.md")
    assert code == 0, err
    assert err.strip().endswith("regenerated acp_v2_draft") and out == ""
    pins = (project / "schema" / "pins.toml").read_text(encoding="utf-8")
    assert pins == (GOLDEN / "pins-npm-2.4.0.toml").read_text(
        encoding="utf-8"
    ), "run tests/upgrade/regen.py and review"
    assert (
        "# The draft moves with every SDK release" in pins and "# pinned by hand" in pins
    )  # comments intact
    pin = load_pins(project / "schema" / "pins.toml").get("acp_v2_draft")
    assert pin is not None and pin.source.startswith("npm:@agentclientprotocol/sdk@2.4.0#")
    assert pin.history[-1].source.startswith("npm:@agentclientprotocol/sdk@2.2.0#")
    report = (project / "report.md").read_text(encoding="utf-8")
    assert report == (GOLDEN / "npm-2.2.0__npm-2.4.0.report.md").read_text(encoding="utf-8")
    assert "## Python API changes" in report and "- `Agent.session_archive`" in report
    after = tree(project / "generated")
    assert after != before and "acp_v2_draft/stale_module.py" not in after
    assert after == {
        f"acp_v2_draft/{k}": v
        for k, v in tree(project_root() / "generated" / "acp_v2_draft").items()
    }


def test_dry_run_writes_nothing(fake_npm: FakeNpm, project: Path) -> None:
    before = tree(project)
    code, out, err = _upgrade(
        fake_npm, project, "--dry-run", "--to", "2.4.0", "--report", "report.md"
    )
    assert code == 0, err
    assert tree(project) == before
    assert (
        '-source = "npm:@agentclientprotocol/sdk@2.2.0#schema/v2/schema.unstable.json"  # pinned by hand'
        in out
    )
    assert (
        '+source = "npm:@agentclientprotocol/sdk@2.4.0#schema/v2/schema.unstable.json"  # pinned by hand'
        in out
    )
    assert "# Upgrade `acp_v2_draft`" in out and "## Python API changes" in out
    assert err.startswith("would upgrade acp_v2_draft")


def test_identical_file_updates_nothing(fake_npm: FakeNpm, project: Path) -> None:
    fake_npm.publish("2.2.1", "npm-2.2.0")
    before = tree(project)
    code, out, err = _upgrade(fake_npm, project, "--to", "2.2.1")
    assert code == 0 and out == ""
    assert "has the same file as the pinned" in err and "nothing to update" in err
    assert tree(project) == before


def test_already_newest_updates_nothing(fake_npm: FakeNpm, project: Path) -> None:
    assert _upgrade(fake_npm, project, "--to", "2.4.0")[0] == 0
    after = tree(project)
    code, out, err = _upgrade(fake_npm, project)
    assert (code, out) == (0, "") and tree(project) == after
    assert (
        err.strip()
        == "acp_v2_draft: already at the newest release (npm:@agentclientprotocol/sdk@2.4.0); nothing to update"
    )


def test_a_failed_fetch_leaves_everything(fake_npm: FakeNpm, project: Path) -> None:
    fake_npm.publish(
        "2.3.0", "npm-2.2.0", replace={"schema/v2/schema.unstable.json": b"{ not json"}
    )
    before = tree(project)
    code, _, err = _upgrade(fake_npm, project, "--to", "2.3.0")
    assert code == 2 and len(err.splitlines()) == 1 and "invalid JSON" in err, err
    assert tree(project) == before
    code, _, err = _upgrade(fake_npm, project, "--to", "9.9.9")
    assert code == 2 and "No matching version found" in err and tree(project) == before


def test_a_failed_write_puts_the_pin_file_back(fake_npm: FakeNpm, project: Path) -> None:
    blocker = project / "blocked"
    blocker.write_text("a file where the output directory should be\n", encoding="utf-8")
    code, _, err = _upgrade(fake_npm, project, "--out", "blocked")
    assert code == 2 and "error[write-failed]" in err, err
    assert (project / "schema" / "pins.toml").read_bytes() == PINS_2_2.read_bytes()
    assert STALE_MARK in (project / "generated" / "acp_v2_draft" / "models.py").read_text(
        encoding="utf-8"
    )


def test_unknown_target_and_non_npm_pins(fake_npm: FakeNpm, project: Path) -> None:
    run = run_cli(
        "upgrade",
        "nope",
        "--pins",
        "schema/pins.toml",
        env=fake_npm.env(project / "c"),
        cwd=project,
    )
    assert run.returncode == 2 and run.stderr.startswith("error[unknown-target]"), run.describe()
    pins = project / "schema" / "pins.toml"
    pins.write_text(
        pins.read_text(encoding="utf-8").replace(
            "npm:@agentclientprotocol/sdk@2.2.0#schema/v2/schema.unstable.json",
            "../x/schema.unstable.json",
        ),
        encoding="utf-8",
    )
    run = run_cli(
        "upgrade",
        "acp_v2_draft",
        "--pins",
        "schema/pins.toml",
        env=fake_npm.env(project / "c"),
        cwd=project,
    )
    assert run.returncode == 2 and "give --to SOURCE" in run.stderr, run.describe()
