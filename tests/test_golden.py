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
    assert not problems, "generated/ is out of date; " + REGEN_HINT + ":\n  " + "\n  ".join(problems)


def test_fresh_generate_writes_every_package_file(fresh_generated: Path, pins: PinFile) -> None:
    for pin in pins:
        names = set(tree_bytes(fresh_generated / pin.package))
        assert {"__init__.py", "models.py", "enums.py", "dispatch.py", "py.typed"} <= names, names
        assert not [p for p in fresh_generated.iterdir() if p.name.startswith(".")], "staging left over"


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
        ("modify", "acp_v2/models.py", "a/acp_v2/models.py", "b/acp_v2/models.py", "-# edited by hand"),
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
    generated_dir: Path, pins: PinFile, tmp_path: Path
) -> None:
    packages = [pin.package for pin in pins]
    missing = [p for p in packages if not (generated_dir / p).is_dir()]
    assert not missing, f"generated/ lacks {missing}; {REGEN_HINT}"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.11",
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", *packages],
        cwd=generated_dir, capture_output=True, text=True, timeout=900, check=False,
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
        cwd=generated_dir, input=json.dumps(wanted), capture_output=True, text=True,
        timeout=300, check=False,
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
        return run_cli("generate", target.name, "--no-cache", "--out", tmp_path / f"seed-{seed}",
                       env={"PYTHONHASHSEED": seed})

    with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
        results = list(pool.map(one, seeds))
    for result in results:
        assert result.returncode == 0, result.describe()
    trees = [tree_bytes(tmp_path / f"seed-{seed}" / target.package) for seed in seeds]
    assert trees[0] and "models.py" in trees[0]
    for seed, tree in zip(seeds[1:], trees[1:]):
        differing = sorted(k for k in trees[0].keys() | tree.keys() if trees[0].get(k) != tree.get(k))
        assert not differing, f"PYTHONHASHSEED=0 and ={seed} generate different {differing}"


def _without_provenance(text: bytes) -> list[str]:
    return [
        line for line in text.decode().splitlines()
        if not line.startswith(("# Source: ", "# sha256: ", "SOURCE = ", "SHA256 = "))
    ]


def test_generation_does_not_depend_on_definition_order(
    tmp_path: Path, pinned_sources: PinFile
) -> None:
    target = pinned_sources.default_pin
    document = load(target.source, target.sha256).document
    defs = document["$defs"]
    forward = write_json(tmp_path / "forward.json", document)
    backward = write_json(tmp_path / "backward.json", {**document, "$defs": dict(reversed(defs.items()))})
    trees = []
    for source in (forward, backward):
        result = run_cli("generate", "--schema", source, "--package", "ordered", "--out", tmp_path / source.stem)
        assert result.returncode == 0, result.describe()
        trees.append(tree_bytes(tmp_path / source.stem / "ordered"))
    assert trees[0].keys() == trees[1].keys()
    for name in trees[0]:
        assert _without_provenance(trees[0][name]) == _without_provenance(trees[1][name]), name


# --- the format stage: split, parallel formatting is byte-identical to black on the whole file --


def test_split_formatting_equals_black_on_the_whole_file(pinned_sources: PinFile) -> None:
    import black

    from acp_codegen.fmt import black_mode, format_files, split_pieces
    from acp_codegen.pipeline import ir_for
    from acp_codegen.render.package import render_package

    target = pinned_sources.default_pin
    files = render_package(ir_for(target.source, target.sha256), target.package)
    largest = max((name for name in files if name.endswith(".py")), key=lambda name: len(files[name]))
    assert len(split_pieces(files[largest])) > 5, f"{largest}, the largest module, is no longer split"
    formatted = format_files(files, None)  # no cache: every piece is formatted now
    for name, text in files.items():
        if name.endswith(".py"):
            assert formatted[name] == black.format_str(text, mode=black_mode()), name


def test_a_format_failure_in_a_worker_is_one_diagnostic() -> None:
    from acp_codegen.errors import CodegenError
    from acp_codegen.fmt import format_files

    good = "".join(f"class C{i}:\n    x: int = {i}\n\n\n" for i in range(3500))  # split, parallel
    with pytest.raises(CodegenError) as caught:
        format_files({"a.py": good, "b.py": good + "def broken(:\n    pass\n"}, None)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.render().startswith("error[format-failed] b.py: black could not format")


def test_every_shortcut_of_the_format_stage_keeps_blacks_layout(pinned_sources: PinFile) -> None:
    """What `generate` writes (heads and the facade taken as they are, pieces `black_stable`
    accepts skipped, the rest formatted in workers) is black's output for every Python file."""
    import black

    from acp_codegen.fmt import black_mode
    from acp_codegen.pipeline import Target, render_target

    files, _ = render_target(Target.from_pin(pinned_sources.default_pin), cache_dir=None)
    python = [name for name in files if name.endswith(".py")]
    assert len(python) > 150
    for name in python:
        assert files[name] == black.format_str(files[name], mode=black_mode()), name
