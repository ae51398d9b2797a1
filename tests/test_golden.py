"""Golden tests: the committed generated/ is exactly what `acp-codegen generate` produces.

Also: `generate --check` reports drift as a unified diff, the generated packages pass
`mypy --strict` and import cleanly, and generation is deterministic (hash seeds, key order).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_support import CliResult, run_cli, tree_bytes, tree_state, write_json

from acp_codegen.pins import PinFile
from acp_codegen.pipeline import load

REGEN_HINT = "run `nox -s regen` (or `acp-codegen generate`) and commit the result"
HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@", re.MULTILINE)


# --- golden -----------------------------------------------------------------------------------


def test_committed_generated_matches_a_fresh_generate(
    fresh_generated: Path, generated_dir: Path, pins: PinFile
) -> None:
    problems: list[str] = []
    for pin in pins:
        fresh = tree_bytes(fresh_generated / pin.package)
        committed = tree_bytes(generated_dir / pin.package)
        assert fresh, f"generate wrote nothing for {pin.package}"
        for name in sorted(fresh.keys() | committed.keys()):
            if name not in committed:
                problems.append(f"{pin.package}/{name}: missing from generated/")
            elif name not in fresh:
                problems.append(f"{pin.package}/{name}: in generated/ but no longer generated")
            elif fresh[name] != committed[name]:
                problems.append(f"{pin.package}/{name}: differs from a fresh generate")
    packages = {pin.package.split(".")[0] for pin in pins}
    for extra in sorted(p.name for p in generated_dir.iterdir() if p.is_dir()):
        if extra not in packages and not extra.startswith("."):
            problems.append(f"{extra}/: a package in generated/ that no pin generates")
    assert not problems, (
        "generated/ is out of date; " + REGEN_HINT + ":\n  " + "\n  ".join(problems)
    )


def test_fresh_generate_writes_every_package_file(fresh_generated: Path, pins: PinFile) -> None:
    for pin in pins:
        names = set(tree_bytes(fresh_generated / pin.package))
        assert {"__init__.py", "models.py", "enums.py", "dispatch.py", "py.typed"} <= names, names
        assert not [
            p for p in fresh_generated.iterdir() if p.name.startswith(".")
        ], "staging left over"


# --- --check ----------------------------------------------------------------------------------


@pytest.fixture
def tree_copy(fresh_generated: Path, tmp_path: Path) -> Path:
    """A private copy of a freshly generated tree, to modify."""
    copy = tmp_path / "generated"
    shutil.copytree(fresh_generated, copy)
    return copy


def _check(out: Path) -> CliResult:
    return run_cli("generate", "--check", "--out", out)


def test_check_is_clean_on_a_fresh_tree(tree_copy: Path, pins: PinFile) -> None:
    before = tree_state(tree_copy)
    result = _check(tree_copy)
    assert result.returncode == 0, result.describe()
    assert not HUNK.search(result.stdout), result.describe()
    assert f"{len(pins.targets)} target(s) checked, 0 out of date" in result.stdout
    assert tree_state(tree_copy) == before, "--check wrote to the tree"


def _edit(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[10] = "# edited by hand\n"
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("how", "relative", "old_label", "new_label", "marker"),
    [
        (
            "modify",
            "acp_v2/models.py",
            "a/acp_v2/models.py",
            "b/acp_v2/models.py",
            "-# edited by hand",
        ),
        ("add", "acp_v1/extra.py", "a/acp_v1/extra.py", "/dev/null", "-print('stray')"),
        ("remove", "acp_v2_draft/enums.py", "/dev/null", "b/acp_v2_draft/enums.py", "+class "),
    ],
)
def test_check_reports_drift_as_a_unified_diff(
    tree_copy: Path, how: str, relative: str, old_label: str, new_label: str, marker: str
) -> None:
    path = tree_copy / relative
    if how == "modify":
        _edit(path)
    elif how == "add":
        path.write_text("print('stray')\n", encoding="utf-8")
    else:
        path.unlink()
    before = tree_state(tree_copy)
    result = _check(tree_copy)
    assert result.returncode == 1, result.describe()
    assert f"--- {old_label}\n+++ {new_label}\n" in result.stdout, result.describe()
    assert HUNK.search(result.stdout), result.describe()
    assert any(line.startswith(marker) for line in result.stdout.splitlines()), result.describe()
    assert "1 out of date" in result.stdout, result.describe()
    assert "nox -s regen" in result.stderr, result.describe()
    assert "Traceback" not in result.output
    assert tree_state(tree_copy) == before, "--check wrote to the tree"


def test_check_diff_only_names_the_drifted_package(tree_copy: Path) -> None:
    _edit(tree_copy / "acp_v2/models.py")
    result = _check(tree_copy)
    assert result.returncode == 1, result.describe()
    headers = [line for line in result.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == ["--- a/acp_v2/models.py", "+++ b/acp_v2/models.py"], headers


# --- mypy --strict and imports ----------------------------------------------------------------


def test_generated_packages_pass_mypy_strict(
    generated_dir: Path, pins: PinFile, mypy_cache: Path
) -> None:
    packages = [pin.package for pin in pins]
    missing = [p for p in packages if not (generated_dir / p).is_dir()]
    assert not missing, f"generated/ lacks {missing}; {REGEN_HINT}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.11",
            "--cache-dir",
            str(mypy_cache),
            "--no-error-summary",
            *packages,
        ],
        cwd=generated_dir,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"mypy --strict failed:\n{done.stdout}{done.stderr}"


_IMPORT_SCRIPT = """
import importlib, json, sys
wanted = json.load(sys.stdin)
problems = []
for package, names in wanted.items():
    module = importlib.import_module(package)
    exported = set(getattr(module, "__all__", ()))
    for name in names:
        if not hasattr(module, name):
            problems.append(f"{package}: {name} is not importable from the package root")
        elif name not in exported:
            problems.append(f"{package}: {name} is missing from __all__")
print("\\n".join(problems))
sys.exit(1 if problems else 0)
"""


def test_every_schema_definition_is_importable_from_the_package_root(
    generated_dir: Path, pinned_sources: PinFile
) -> None:
    wanted = {
        pin.package: sorted(load(pin.source, pin.sha256).document["$defs"])
        for pin in pinned_sources
    }
    assert all(wanted.values())
    # A fresh interpreter, warnings as errors: an import must be silent as well as successful.
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", _IMPORT_SCRIPT],
        cwd=generated_dir,
        input=json.dumps(wanted),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}{done.stderr}"
    assert done.stderr == "", done.stderr


# --- determinism ------------------------------------------------------------------------------


def test_generation_does_not_depend_on_the_hash_seed(
    tmp_path: Path, pinned_sources: PinFile
) -> None:
    target = pinned_sources.default_pin
    seeds = ("0", "1", "12345")

    def one(seed: str) -> CliResult:
        return run_cli(
            "generate",
            target.name,
            "--out",
            tmp_path / f"seed-{seed}",
            env={"PYTHONHASHSEED": seed},
        )

    with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
        results = list(pool.map(one, seeds))
    for result in results:
        assert result.returncode == 0, result.describe()
    trees = [tree_bytes(tmp_path / f"seed-{seed}" / target.package) for seed in seeds]
    assert trees[0] and "models.py" in trees[0]
    for seed, tree in zip(seeds[1:], trees[1:], strict=True):
        differing = sorted(
            k for k in trees[0].keys() | tree.keys() if trees[0].get(k) != tree.get(k)
        )
        assert not differing, f"PYTHONHASHSEED=0 and ={seed} generate different {differing}"


def _without_provenance(text: bytes) -> list[str]:
    return [
        line
        for line in text.decode().splitlines()
        if not line.startswith(
            ("# Source: ", "# sha256: ", "# Regenerate: ", "SOURCE = ", "SHA256 = ")
        )
    ]


def test_generation_does_not_depend_on_definition_order(
    tmp_path: Path, pinned_sources: PinFile
) -> None:
    target = pinned_sources.default_pin
    document = load(target.source, target.sha256).document
    defs = document["$defs"]
    forward = write_json(tmp_path / "forward.json", document)
    backward = write_json(
        tmp_path / "backward.json", {**document, "$defs": dict(reversed(defs.items()))}
    )
    trees = []
    for source in (forward, backward):
        result = run_cli(
            "generate", "--schema", source, "--package", "ordered", "--out", tmp_path / source.stem
        )
        assert result.returncode == 0, result.describe()
        trees.append(tree_bytes(tmp_path / source.stem / "ordered"))
    assert trees[0].keys() == trees[1].keys()
    for name in trees[0]:
        assert _without_provenance(trees[0][name]) == _without_provenance(trees[1][name]), name


# --- the format stage: `ruff format` writes black's bytes ----------------------------------------


def test_what_generate_writes_is_blacks_output(
    generated_dir: Path, pinned_sources: PinFile
) -> None:
    """The formatter is `ruff format` (pinned); the bytes are black's (pinned): black changes no
    committed generated file, and none of a fresh render of the default pin."""
    import black

    from acp_codegen.fmt import LINE_LENGTH
    from acp_codegen.pipeline import Target, render_target

    mode = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=LINE_LENGTH)
    files, _ = render_target(Target.from_pin(pinned_sources.default_pin))
    python = {name: text for name, text in files.items() if name.endswith(".py")}
    committed = {
        str(p.relative_to(generated_dir)): p.read_text(encoding="utf-8")
        for p in generated_dir.rglob("*.py")
    }
    assert len(python) > 50 and len(committed) > 150
    for name, text in [*python.items(), *committed.items()]:
        assert black.format_str(text, mode=mode) == text, f"black would change {name}"


def test_the_drafts_package_stays_a_size_a_person_reads(generated_dir: Path) -> None:
    """Issue 30's bound: the draft's package, all of it, is at most 15,000 lines of Python."""
    lines = sum(
        len(p.read_text(encoding="utf-8").splitlines())
        for p in (generated_dir / "acp_v2_draft").rglob("*.py")
    )
    assert lines <= 15_000, f"acp_v2_draft is {lines} lines"
