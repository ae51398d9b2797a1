"""`acp-codegen outdated` end to end against a fake `npm` (and once, opt-in, the real registry)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from upgrade_support import HERE, FakeNpm, run_cli

from acp_codegen.pins import default_pin_path

PINS_2_2 = HERE / "fixtures" / "pins-npm-2.2.0.toml"


def _outdated(npm: FakeNpm, tmp_path: Path, pins: Path, *args: str) -> tuple[int, str, str]:
    run = run_cli("outdated", "--pins", pins, *args, env=npm.env(tmp_path / "cache"), cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.describe()
    return run.returncode, run.stdout, run.stderr


def test_every_target_current(fake_npm: FakeNpm, tmp_path: Path) -> None:
    fake_npm.publish("2.5.0-beta.1", "npm-2.4.0")  # pre-releases do not count by default
    code, out, _ = _outdated(fake_npm, tmp_path, default_pin_path())
    assert code == 0, out
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows == [[t, "2.4.0", "(current)", "-"] for t in ("acp_v2_draft", "acp_v2", "acp_v1")]
    assert [c[0] for c in fake_npm.calls()] == [
        "view"
    ]  # asked once for the package, nothing fetched


def test_newer_release_with_another_file(fake_npm: FakeNpm, tmp_path: Path) -> None:
    code, out, _ = _outdated(fake_npm, tmp_path, PINS_2_2)
    assert code == 1
    assert out.splitlines()[1].split() == [
        "acp_v2_draft",
        "2.2.0",
        "2.4.0",
        "yes",
        "0",
        "breaking,",
        "0",
        "warning,",
        "40",
        "info",
    ]
    code, out, _ = _outdated(fake_npm, tmp_path, PINS_2_2, "--format", "json", "acp_v2_draft")
    (row,) = json.loads(out)["targets"]
    assert code == 1 and row["status"] == "outdated" and row["file_changed"] is True
    assert (
        row["newest_source"] == "npm:@agentclientprotocol/sdk@2.4.0#schema/v2/schema.unstable.json"
    )
    assert (
        row["newest_sha256"] == "49e10f8c1935854363ed5b176cc6560d856642ba5020c97d264d34de4b6f1b31"
    )
    assert row["summary"] == {"breaking": 0, "warning": 0, "info": 40, "docs": 65}
    # the fetched tarball is cached: the second run packed nothing
    assert [c[0] for c in fake_npm.calls()] == ["view", "pack", "view"]


def test_newer_release_with_the_same_file(fake_npm: FakeNpm, tmp_path: Path) -> None:
    fake_npm.publish("2.4.1", "npm-2.4.0")
    code, out, _ = _outdated(fake_npm, tmp_path, default_pin_path(), "--format", "json")
    rows = json.loads(out)["targets"]
    assert code == 0
    assert [(r["status"], r["newest"], r["file_changed"]) for r in rows] == [
        ("same-file", "2.4.1", False)
    ] * 3


def test_a_release_without_the_pinned_file(fake_npm: FakeNpm, tmp_path: Path) -> None:
    fake_npm.publish("3.0.0", "npm-2.4.0", drop=("schema/v2/schema.unstable.json",))
    code, out, _ = _outdated(fake_npm, tmp_path, default_pin_path())
    assert code == 1
    rows = [line.split(None, 4) for line in out.splitlines()[1:]]
    assert rows[0] == [
        "acp_v2_draft",
        "2.4.0",
        "3.0.0",
        "yes",
        "3.0.0 has no file schema/v2/schema.unstable.json: the schema moved",
    ]
    assert rows[1][:4] == ["acp_v2", "2.4.0", "3.0.0", "no"]  # its file is the same in 3.0.0


def test_other_sources_are_not_checked(fake_npm: FakeNpm, tmp_path: Path) -> None:
    pins = tmp_path / "pins.toml"
    sha = "0" * 64
    pins.write_text(
        f'[[target]]\nname = "g"\npackage = "g"\nsource = "github:o/r@abc123#s.json"\nsha256 = "{sha}"\n'
        f'[[target]]\nname = "u"\npackage = "u"\nsource = "https://example.org/s.json"\nsha256 = "{sha}"\n'
        f'[[target]]\nname = "p"\npackage = "p"\nsource = "schema.json"\nsha256 = "{sha}"\n',
        encoding="utf-8",
    )
    code, out, _ = _outdated(fake_npm, tmp_path, pins, "--format", "json")
    rows = json.loads(out)["targets"]
    assert code == 0 and [r["status"] for r in rows] == ["not-checked"] * 3
    assert [r["reason"].split()[0] for r in rows] == ["github:", "plain", "local"]
    assert fake_npm.calls() == []


def test_registry_unreachable_is_one_line_exit_2(fake_npm: FakeNpm, tmp_path: Path) -> None:
    fake_npm.unreachable = True
    code, out, err = _outdated(fake_npm, tmp_path, default_pin_path())
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "error[registry-failed] @agentclientprotocol/sdk: `npm view @agentclientprotocol/sdk` failed (exit 1): "
        + "network request failed, reason: getaddrinfo ENOTFOUND registry"
    ]


def test_npm_missing_is_one_line_exit_2(fake_npm: FakeNpm, tmp_path: Path) -> None:
    env = {**fake_npm.env(tmp_path / "cache"), "PATH": str(tmp_path / "empty")}
    run = run_cli("outdated", env=env, cwd=tmp_path)
    assert run.returncode == 2, run.describe()
    assert run.stderr.splitlines() == [
        "error[registry-failed] @agentclientprotocol/sdk: cannot check @agentclientprotocol/sdk: "
        + "the `npm` client is not on PATH"
    ]


@pytest.mark.network
def test_real_registry(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if "network" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("talks to the real npm registry: run with -m network")
    if shutil.which("npm") is None:
        pytest.fail("the network test needs the real `npm` client on PATH")
    env = {**os.environ, "ACP_CODEGEN_CACHE": str(tmp_path / "cache")}
    run = run_cli("outdated", "--format", "json", env=env)
    assert run.returncode in (0, 1), run.describe()
    rows = json.loads(run.stdout)["targets"]
    assert {r["target"] for r in rows} == {"acp_v2_draft", "acp_v2", "acp_v1"}
    assert all(r["status"] in ("current", "same-file", "outdated") for r in rows)
