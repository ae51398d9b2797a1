"""Every distribution of the repository builds a wheel that works installed into a fresh venv with
no source tree: the toolkit generates from a schema file and scaffolds an agent, and the
scaffolded agent installs beside them and passes its own tests (runtime vendored from the installed
wheel)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from cli_support import ROOT

from acp_codegen import __version__
from acp_codegen.pins import load_pins, toolkit_pin_path
from acp_codegen.sources import default_cache_dir, default_shared_dir

TIMEOUT = 600


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, f"$ {' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done


def _draft_schema() -> Path:
    """The default pin's schema file, from the cache or the shared revisions (skip without)."""
    pin = load_pins(toolkit_pin_path()).default_pin
    cached = default_cache_dir() / pin.sha256
    if cached.is_file():
        return cached
    manifest = default_shared_dir() / "npm-2.4.0" / "schema.unstable.json"
    if manifest.is_file():
        return manifest
    pytest.skip("the default pin's schema is neither cached nor in the shared revisions")


def _workflow_install(project: Path, wheels: Path) -> list[str]:
    """The install commands of the workflow `ci github --install-from <wheels>` writes for `project`."""
    (project / "schema").mkdir()
    (project / "schema" / "pins.toml").write_bytes(toolkit_pin_path().read_bytes())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workflow = _run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "ci",
            "github",
            "-o",
            "-",
            "--install-from",
            wheels.relative_to(project).as_posix(),
        ],
        project,
        env,
    ).stdout
    block = workflow.split("      - name: Install acp-codegen\n        run: |\n", 1)[1]
    commands = [line.strip() for line in block.splitlines()[:2]]
    assert [c.split()[-1] for c in commands] == [
        f"acp-runtime=={__version__}",
        f"acp-codegen=={__version__}",
    ], commands
    return commands


def test_the_wheels_work_where_no_source_tree_is(tmp_path: Path) -> None:
    schema = _draft_schema()
    wheels, env_dir, work = tmp_path / "wheels", tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    # no source tree anywhere the installed tools look: a clean environment outside the checkout
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["ACP_CODEGEN_SHARED"] = str(default_shared_dir())  # offline: the pinned files by sha256
    env["ACP_CODEGEN_CACHE"] = str(tmp_path / "cache")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(wheels),
            str(ROOT / "runtime"),
            str(ROOT),
        ],
        work,
        env,
    )
    assert sorted(p.name.split("-")[0] for p in wheels.glob("*.whl")) == [
        "acp_codegen",
        "acp_runtime",
    ]
    venv.create(env_dir, with_pip=True)
    python, bin_dir = env_dir / "bin" / "python", env_dir / "bin"
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    # installed exactly as a workflow of `ci github --install-from <the wheels>` installs it, runtime first
    for command in _workflow_install(tmp_path, wheels):
        _run(["bash", "-c", command], tmp_path, env)  # `python` is the fresh venv's (first on PATH)

    located = _run(
        [
            str(python),
            "-c",
            "import acp_codegen, acp_runtime; print(acp_codegen.__file__); print(acp_runtime.__file__)",
        ],
        work,
        env,
    )
    assert all(
        str(env_dir) in line and str(ROOT) not in line for line in located.stdout.split()
    ), located.stdout

    _run(
        [
            str(bin_dir / "acp-codegen"),
            "generate",
            "--schema",
            str(schema),
            "--package",
            "x",
            "--out",
            str(work / "out"),
        ],
        work,
        env,
    )
    imported = _run(
        [str(python), "-c", "import x; print(x.RpcError.__module__, len(x.__all__))"],
        work / "out",
        env,
    )
    assert imported.stdout.split()[0] == "acp_runtime.jsonrpc.framing"

    _run([str(bin_dir / "acp-codegen"), "scaffold", "agent", "my-agent"], work, env)
    project = work / "my-agent"
    assert (project / "acp_runtime" / "bindings.py").is_file()
    # into the same fresh venv (a venv of its own is the README's one-minute run, `nox -s slow`):
    # its dependencies are already there, which saves a second venv's ~40 s of installs
    _run([str(python), "-m", "pip", "install", "-q", "-e", ".[test]"], project, env)
    tested = _run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        project,
        env,
    )
    assert " passed" in tested.stdout and "failed" not in tested.stdout, tested.stdout
