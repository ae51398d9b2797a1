"""Every example in docs/bindings.md runs: `python file=NAME` blocks are written out, every other
`python` block runs as a script next to them."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from bindings_support import PYTHON, ROOT, python_env
from cli_support import python_blocks, write_example

DOC = ROOT / "docs" / "bindings.md"


def _blocks() -> list[tuple[str | None, str]]:
    return python_blocks(DOC)


def test_the_guide_has_examples() -> None:
    blocks = _blocks()
    assert len([b for b in blocks if b[0] is None]) >= 2 and any(b[0] for b in blocks)


@pytest.mark.parametrize("index", [i for i, (name, _) in enumerate(_blocks()) if name is None])
def test_example_runs(index: int, tmp_path: Path) -> None:
    script = write_example(DOC, index, tmp_path)
    result = subprocess.run(
        [PYTHON, str(script)],
        cwd=tmp_path,
        env=python_env(),
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_run_examples_cannot_pass_silently() -> None:
    """An example that shows an error catches it with `try`/`except` and an `else` that fails:
    one whose call stops raising must not pass quietly."""
    silent = []
    for index, (name, code) in enumerate(_blocks()):
        if name is None:
            for node in ast.walk(ast.parse(code)):
                if (
                    isinstance(node, ast.Try)
                    and node.handlers
                    and not any(isinstance(n, ast.Raise) for n in node.orelse)
                ):
                    silent.append((index, node.lineno))
    assert silent == [], f"(example, line) of a try without a failing else: {silent}"


@pytest.mark.slow  # nox -s slow: the CI budget leaves it out
def test_every_example_passes_mypy_and_pyright_strict(tmp_path: Path, mypy_cache: Path) -> None:
    """A user copying any example gets code both type checkers accept in strict mode, no ignores
    (item 9 of issue 34: the first example once did not)."""
    import json
    import shutil
    import sys

    files = []
    for index, (name, code) in enumerate(_blocks()):
        path = tmp_path / (name or f"example_{index}.py")
        path.write_text(code, encoding="utf-8")
        files.append(path.name)
    assert not any("type: ignore" in (tmp_path / f).read_text(encoding="utf-8") for f in files)
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(mypy_cache), *files],
        cwd=tmp_path,
        env={**python_env(), "MYPYPATH": str(ROOT / "generated")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
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
    checked = subprocess.run(
        [pyright, "--pythonpath", sys.executable, *files],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
