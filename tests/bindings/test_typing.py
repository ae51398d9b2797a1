"""A user's file type-checks in strict mode with mypy and with pyright (from the PyPI `pyright`
package, which fetches its node runtime through npm on first use), and misuse is reported on
exactly the marked lines by both."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bindings_support import HERE, ROOT

FILES = (HERE / "user_code.py", HERE / "user_code_errors.py")


def _marked(path: Path) -> dict[int, str]:
    return {
        n: m.group(1)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if (m := re.search(r"# E: ([\w-]+)", line))
    }


def _mypy(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(cache),
            str(path),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"MYPYPATH": str(ROOT / "generated"), "PATH": "/usr/bin:/bin"},
    )


def test_user_code_passes_mypy_strict(mypy_cache: Path) -> None:
    result = _mypy(FILES[0], mypy_cache)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # nox -s slow: the CI budget leaves it out
def test_misuse_is_reported_by_mypy_where_marked(mypy_cache: Path) -> None:
    result = _mypy(FILES[1], mypy_cache)
    found: dict[int, set[str]] = {}
    for line in result.stdout.splitlines():
        m = re.match(r".*?:(\d+): error: .*\[([\w-]+)\]$", line)
        if m:
            found.setdefault(int(m.group(1)), set()).add(m.group(2))
    marked = _marked(FILES[1])
    assert set(found) == set(marked), result.stdout
    assert all(code in found[n] for n, code in marked.items()), result.stdout


def _pyright() -> str:
    found = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("pyright is not installed (pip install pyright)")
    return found


def test_pyright_strict_passes_the_user_code_and_reports_the_misuse(tmp_path: Path) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "extraPaths": [str(ROOT / "generated")],
                "pythonVersion": "3.11",
            }
        )
    )
    for path in FILES:
        shutil.copy(path, tmp_path / path.name)
    result = subprocess.run(
        [_pyright(), "--outputjson", "--pythonpath", sys.executable, *(p.name for p in FILES)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    report = json.loads(result.stdout)
    errors = [
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1)
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert [e for e in errors if e[0] == "user_code.py"] == []
    assert sorted(n for f, n in errors if f == "user_code_errors.py") == sorted(_marked(FILES[1]))
