"""`mypy --strict` on typed use of the generated packages (generated/ on MYPYPATH): the usage
example is clean, the misuse file reports exactly its marked errors, and the example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from models_facts import GENERATED

HERE = Path(__file__).resolve().parent


def _mypy(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.11",
            "--cache-dir",
            str(cache),
            "--no-error-summary",
            "--show-error-codes",
            "--hide-error-context",
            "--no-pretty",
            path.name,
        ],
        cwd=HERE,
        env={**os.environ, "MYPYPATH": str(GENERATED)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_typed_usage_passes_mypy_strict(mypy_cache: Path) -> None:
    done = _mypy(HERE / "typed_usage.py", mypy_cache)
    assert done.returncode == 0, done.stdout + done.stderr


def test_misuse_is_reported_where_marked(mypy_cache: Path) -> None:
    path = HERE / "typed_usage_errors.py"
    expected = {
        (number, m.group(1))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if (m := re.search(r"# E: ([a-z-]+)$", line))
    }
    assert len(expected) >= 6
    done = _mypy(path, mypy_cache)
    found = {
        (int(m.group(1)), m.group(2))
        for m in re.finditer(
            r"^typed_usage_errors\.py:(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.MULTILINE
        )
    }
    assert found == expected, done.stdout + done.stderr


def test_typed_usage_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(HERE / "typed_usage.py")],
        env={**os.environ, "PYTHONPATH": str(GENERATED)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:5] == [
        "SessionUpdateStateUpdateRunning",
        "agent: Reading the file",
        "tool call_1: in_progress",
        "plan: Read [completed], Fix [pending]",
        "idle: end_turn",
    ]
    assert "unknown update _vendor_progress (extension, 2 keys)" in lines
    assert "stop: refusal" in lines
