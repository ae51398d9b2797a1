"""One small schema per generator rule, with its expected output (`tests/generator/cases/`):
what `generate` writes for each is byte for byte the committed expectation (refresh with
`nox -s regen`), black's output, and a package that imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CASES_DIR = Path(__file__).resolve().parent / "cases"
sys.path.insert(0, str(CASES_DIR))

from regen import PACKAGE, cases, generate

REGEN = "run `nox -s regen` (or `python tests/generator/cases/regen.py`) and read the diff"


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.name)
def test_a_case_generates_its_expected_output(case: Path, tmp_path: Path) -> None:
    files = generate(case, tmp_path)
    expected = {
        p.relative_to(case / "expected").as_posix(): p.read_text(encoding="utf-8")
        for p in (case / "expected").rglob("*.py")
    }
    assert files and sorted(files) == sorted(
        expected
    ), f"{case.name}: other files than expected; {REGEN}"
    for path, text in files.items():
        assert (
            text == expected[path]
        ), f"{case.name}/{path} differs from its expected output; {REGEN}"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import {PACKAGE}, {PACKAGE}.dispatch; print(len({PACKAGE}.__all__))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_rule_has_a_case() -> None:
    names = {p.name for p in cases()}
    assert {
        "enums",
        "tagged_union",
        "leniency",
        "three_state",
        "alias_chains",
        "name_collisions",
        "patterns",
        "method_tables",
        "proxy_and_extension",
    } <= names


def test_the_expected_outputs_are_blacks() -> None:
    import black

    from acp_codegen.fmt import LINE_LENGTH

    mode = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=LINE_LENGTH)
    checked = 0
    for path in sorted(CASES_DIR.glob("*/expected/**/*.py")):
        text = path.read_text(encoding="utf-8")
        assert black.format_str(text, mode=mode) == text, f"black would change {path}"
        checked += 1
    assert checked >= 9
