"""The project's own code holds to its stated style (issue 30, requirement 7): black-clean (pinned
release, the root pyproject's settings), ruff-clean under the root pyproject's rule set (docstrings
and line length included) and `mypy --strict` for the toolkit and the runtime library. The README's
test command runs these, so CI does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what is ours to format and lint; generated code and the generator cases' expected output are
# checked by their own tests (they are the formatter's output, not code we write)
OWN_CODE = ["acp_codegen", "runtime/acp_runtime", "tests", "bench", "scripts", "noxfile.py"]
TYPED_CODE = ["acp_codegen", "runtime/acp_runtime"]


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_our_code_is_black_clean() -> None:
    done = _run("black", "--check", "--quiet", *OWN_CODE)
    assert done.returncode == 0, f"run `black {' '.join(OWN_CODE)}`:\n{done.stdout}{done.stderr}"


def test_our_code_is_ruff_clean() -> None:
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", *OWN_CODE)
    assert done.returncode == 0, f"ruff findings:\n{done.stdout}{done.stderr}"


def test_the_toolkit_and_the_runtime_pass_mypy_strict(mypy_cache: Path) -> None:
    done = _run(
        "mypy",
        "--strict",
        "--cache-dir",
        mypy_cache,
        "--no-error-summary",
        *TYPED_CODE,
    )
    assert done.returncode == 0, f"mypy --strict failed:\n{done.stdout}{done.stderr}"
