"""`acp-codegen init` starts tracking a schema in any project (requirement 2 of issue 34): the pin
with the source's sha256, the generated package, how to import it, and every command working on
the new pin file; a scaffolded project gets a pin file too, so `generate --check`, `outdated`,
`upgrade` and `migrate` work in it out of the box. Fetches run against the fake npm registry."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from upgrade_support import FakeNpm, run_cli

from acp_codegen.pins import load_pins
from acp_codegen.sources import default_shared_dir, project_root

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the schema revisions of ../shared (skips without)

DRAFT = "schema/v2/schema.unstable.json"
NPM_2_2 = f"npm:@agentclientprotocol/sdk@2.2.0#{DRAFT}"
NPM_2_0 = f"npm:@agentclientprotocol/sdk@2.0.0#{DRAFT}"


def _sha(revision: str, name: str = "schema.unstable.json") -> str:
    return hashlib.sha256((default_shared_dir() / revision / name).read_bytes()).hexdigest()


def _import_line(stdout: str) -> str:
    """The command `init` prints to show the package imports."""
    match = re.search(r"^import it: (.+?)(?:   \(in .*\))?$", stdout, re.MULTILINE)
    assert match, stdout
    return match.group(1)


def _run_shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a printed `VAR=value python -c ...` line with this interpreter as `python`."""
    words = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    assert words[0] == "python", command
    return subprocess.run(
        [sys.executable, *words[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_init_pins_generates_and_says_how_to_import(fake_npm: FakeNpm, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = fake_npm.env(tmp_path / "cache")
    run = run_cli("init", env=env, cwd=project)
    assert run.returncode == 0, run.describe()
    pins = load_pins(project / "schema" / "pins.toml")
    default = load_pins(project_root() / "schema" / "pins.toml").default_pin
    assert [(p.name, p.package, p.source, p.sha256) for p in pins] == [
        (default.name, default.package, default.source, default.sha256)
    ]
    assert pins.vendor_runtime and pins.default == default.name
    assert stat.S_IMODE((project / "schema" / "pins.toml").stat().st_mode) == 0o666 & ~_umask()
    line = _import_line(run.stdout)
    assert line == f'PYTHONPATH=generated python -c "import {default.package}"'
    code = f"import {default.package}, acp_runtime; print(acp_runtime.__file__)"
    imported = _run_shell(line.replace(f'"import {default.package}"', shlex.quote(code)), project)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == str(
        project / "generated" / "acp_runtime" / "__init__.py"
    )  # the vendored copy
    check = run_cli(
        "generate", "--check", env=env, cwd=project / "schema"
    )  # from below the root too
    assert check.returncode == 0, check.describe()
    assert (
        "2 target(s)" not in check.stdout and "1 target(s) checked, 0 out of date" in check.stdout
    )
    outdated = run_cli("outdated", "--format", "json", env=env, cwd=project)
    assert outdated.returncode == 0, outdated.describe()
    assert [r["status"] for r in json.loads(outdated.stdout)["targets"]] == ["current"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_init_an_npm_release_then_upgrade_and_migrate_it(fake_npm: FakeNpm, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "agent.py").write_text(
        "from old_acp import AvailableCommand\n", encoding="utf-8"
    )
    env = fake_npm.env(tmp_path / "cache")
    run = run_cli(
        "init", NPM_2_0, "--package", "old_acp", "--no-vendor-runtime", env=env, cwd=project
    )
    assert run.returncode == 0, run.describe()
    assert ["pack", "@agentclientprotocol/sdk@2.0.0"] == [
        a for a in fake_npm.calls()[-1] if not a.startswith("-")
    ][:2]
    pin = load_pins(project / "schema" / "pins.toml").get("old_acp")
    assert pin is not None and (pin.source, pin.sha256) == (NPM_2_0, _sha("npm-2.0.0"))
    assert (
        "install acp-runtime" in run.stdout and not (project / "generated" / "acp_runtime").exists()
    )
    upgraded = run_cli("upgrade", "old_acp", "--report", "report.md", env=env, cwd=project)
    assert upgraded.returncode == 0, upgraded.describe()
    assert load_pins(project / "schema" / "pins.toml").get("old_acp").sha256 == _sha("npm-2.4.0")  # type: ignore[union-attr]
    migrated = run_cli(
        "migrate", "src", "--from", NPM_2_0, "--to", "old_acp", "--check", env=env, cwd=project
    )
    assert (
        migrated.returncode == 1
    ), migrated.describe()  # AvailableCommand is a union now: a person decides
    assert "src/agent.py:1:" in migrated.stdout


def test_init_appends_to_the_projects_pin_file_and_refuses_a_taken_name(
    fake_npm: FakeNpm, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    (project / "schema").mkdir(parents=True)
    (project / "src").mkdir()
    env = fake_npm.env(tmp_path / "cache")
    first = run_cli("init", "acp_v1", env=env, cwd=project)
    assert first.returncode == 0, first.describe()
    pins_path = project / "schema" / "pins.toml"
    pins_path.write_text(
        "# kept comment\n" + pins_path.read_text(encoding="utf-8"), encoding="utf-8"
    )
    schema = project / "schemas" / "v2.json"
    schema.parent.mkdir()
    schema.write_bytes((default_shared_dir() / "npm-2.4.0" / "schema.json").read_bytes())
    second = run_cli(
        "init", "../schemas/v2.json", "--package", "my_acp", env=env, cwd=project / "src"
    )
    assert second.returncode == 0, second.describe()
    text = pins_path.read_text(encoding="utf-8")
    assert text.startswith("# kept comment\n")
    pins = load_pins(pins_path)
    assert [(p.name, p.source) for p in pins][1] == (
        "my_acp",
        "schemas/v2.json",
    )  # relative to the root
    assert (project / "generated" / "my_acp" / "__init__.py").is_file() and not (
        project / "src" / "generated"
    ).exists()
    regenerated = run_cli(
        "generate", "my_acp", env=env, cwd=project
    )  # from the root, as the pin reads
    assert (
        regenerated.returncode == 0 and "1 target(s): 0 file(s) written" in regenerated.stdout
    ), regenerated.describe()
    again = run_cli("init", "acp_v1", env=env, cwd=project)
    assert again.returncode == 2 and len(again.stderr.splitlines()) == 1, again.describe()
    assert again.stderr.startswith(
        f"error[already-tracked] {pins_path}: target 'acp_v1' is already pinned"
    )
    assert pins_path.read_text(encoding="utf-8") == text


def test_init_shows_the_npm_fetch_on_a_terminal(fake_npm: FakeNpm, tmp_path: Path) -> None:
    from test_cli_generate import run_cli_tty

    env = fake_npm.env(tmp_path / "cache")
    status, text = run_cli_tty("init", NPM_2_2, "--package", "old_acp", cwd=tmp_path, env=env)
    assert status == 0, text
    assert "fetching @agentclientprotocol/sdk@2.2.0 (npm pack)" in text, text
    assert "generating old_acp from npm:@agentclientprotocol/sdk@2.2.0" in text, text


def test_a_scaffolded_project_is_tracked_out_of_the_box(fake_npm: FakeNpm, tmp_path: Path) -> None:
    env = fake_npm.env(tmp_path / "cache")
    made = run_cli("scaffold", "agent", "my-agent", "--schema", NPM_2_2, env=env, cwd=tmp_path)
    assert made.returncode == 0, made.describe()
    project = tmp_path / "my-agent"
    pins = load_pins(project / "schema" / "pins.toml")
    assert [(p.name, p.package) for p in pins] == [
        ("acp_v1", "my_agent.acp_v1"),
        ("acp", "my_agent.acp"),
    ]
    assert pins.get("acp").sha256 == _sha("npm-2.2.0") and pins.out == "." and pins.vendor_runtime  # type: ignore[union-attr]
    check = run_cli("generate", "--check", env=env, cwd=project)
    assert check.returncode == 0, check.describe()
    outdated = run_cli("outdated", "--format", "json", env=env, cwd=project)
    assert outdated.returncode == 1, outdated.describe()
    assert {r["target"]: r["status"] for r in json.loads(outdated.stdout)["targets"]} == {
        "acp_v1": "current",
        "acp": "outdated",
    }
    upgraded = run_cli("upgrade", "acp", "--report", "report.md", env=env, cwd=project)
    assert upgraded.returncode == 0, upgraded.describe()
    assert "regenerated my_agent.acp" in upgraded.stderr
    after = run_cli("generate", "--check", env=env, cwd=project)
    assert (
        after.returncode == 0
    ), after.describe()  # the upgrade wrote my_agent/acp/, where the pins say
    migrated = run_cli(
        "migrate", "my_agent", "--from", NPM_2_2, "--to", "acp", "--check", env=env, cwd=project
    )
    assert migrated.returncode in (0, 1) and "reference(s)" in migrated.stdout, migrated.describe()
