"""The cross-version API is typed by the versions it is given: a user file serving v1 and v2 and
talking to either passes `mypy --strict` and pyright strict with no ignores, and `assert_type`
in it would fail on `Any` (tests/versions/typed_versions.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
USER_FILE = HERE / "typed_versions.py"


def test_the_user_file_passes_mypy_strict(mypy_cache: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(mypy_cache),
            str(USER_FILE),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"MYPYPATH": str(ROOT / "generated"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_user_file_passes_pyright_strict(tmp_path: Path) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if pyright is None:
        pytest.skip("pyright is not installed (pip install pyright)")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "extraPaths": [str(ROOT / "generated")],
                "pythonVersion": "3.11",
            }
        )
    )
    shutil.copy(USER_FILE, tmp_path / USER_FILE.name)
    done = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable, USER_FILE.name],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    report = json.loads(done.stdout)
    errors = [
        f"{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert errors == []
