"""Run in a user's project, `outdated` and `upgrade` use that project's pins, output and cache, not the toolkit's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from upgrade_support import FakeNpm, run_cli

from acp_codegen.pins import load_pins
from acp_codegen.sources import default_shared_dir

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the schema revisions of ../shared (skips without)

DRAFT = "schema/v2/schema.unstable.json"


def _sha(revision: str) -> str:
    return hashlib.sha256(
        (default_shared_dir() / revision / "schema.unstable.json").read_bytes()
    ).hexdigest()


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A user's project pinning one target (`mine`, package `my_acp`) to npm-2.2.0, with a `src/` subdirectory."""
    root = tmp_path / "userproj"
    (root / "schema").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "schema" / "pins.toml").write_text(
        "# my project's pins\n"
        "[[target]]\n"
        'name = "mine"\n'
        'package = "my_acp"\n'
        f'source = "npm:@agentclientprotocol/sdk@2.2.0#{DRAFT}"\n'
        f'sha256 = "{_sha("npm-2.2.0")}"\n',
        encoding="utf-8",
    )
    return root


def _env(npm: FakeNpm) -> dict[str, str]:
    env = npm.env(npm.root / "unused-cache")
    del env["ACP_CODEGEN_CACHE"]  # the default cache location is part of what is checked
    return env


def test_outdated_reads_the_pins_of_the_current_project(
    fake_npm: FakeNpm, user_project: Path
) -> None:
    run = run_cli("outdated", "--format", "json", env=_env(fake_npm), cwd=user_project / "src")
    assert run.returncode == 1, run.describe()  # 2.4.0 changes the pinned file
    rows = json.loads(run.stdout)["targets"]
    assert [(r["target"], r["status"]) for r in rows] == [("mine", "outdated")]
    assert (user_project / ".cache" / "acp-codegen" / _sha("npm-2.4.0")).is_file()


def test_upgrade_edits_the_current_projects_pins_and_generated_dir(
    fake_npm: FakeNpm, user_project: Path
) -> None:
    run = run_cli(
        "upgrade", "mine", "--report", "report.md", env=_env(fake_npm), cwd=user_project / "src"
    )
    assert run.returncode == 0, run.describe()
    pin = load_pins(user_project / "schema" / "pins.toml").get("mine")
    assert pin is not None and pin.source == f"npm:@agentclientprotocol/sdk@2.4.0#{DRAFT}"
    assert [h.source for h in pin.history] == [f"npm:@agentclientprotocol/sdk@2.2.0#{DRAFT}"]
    assert (
        (user_project / "schema" / "pins.toml")
        .read_text(encoding="utf-8")
        .startswith("# my project's pins\n")
    )
    assert (
        user_project / "generated" / "my_acp" / "models.py"
    ).is_file()  # beside schema/, not in src/
    assert not (user_project / "src" / "generated").exists()
    assert "## Python API changes" in (user_project / "src" / "report.md").read_text(
        encoding="utf-8"
    )


def test_outside_any_project_the_toolkits_own_pins_are_used(
    fake_npm: FakeNpm, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "no-project"
    elsewhere.mkdir()
    run = run_cli(
        "outdated", "--format", "json", env=fake_npm.env(tmp_path / "cache"), cwd=elsewhere
    )
    assert run.returncode in (0, 1), run.describe()
    assert [r["target"] for r in json.loads(run.stdout)["targets"]] == [
        "acp_v2_draft",
        "acp_v2",
        "acp_v1",
    ]
