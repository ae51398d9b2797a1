"""`acp-codegen generate` and `pull` through the CLI: atomic writes, stale files, all-or-nothing
multi-target runs, target selection, and what is printed on a terminal, off one, and with --quiet.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, CliResult, run_cli, tree_bytes, tree_state, write_json

from acp_codegen.load import load_source
from acp_codegen.pins import PinFile

Schema = dict[str, Any]
# A package of the minimal schema: the templated files, models.py and the modules of its model
# groups (one per message class here) and py.typed; the runtime is imported, not written.
PACKAGE_FILES = {
    "__init__.py",
    "dispatch.py",
    "enums.py",
    "models.py",
    "_models/__init__.py",
    "_models/ping.py",
    "py.typed",
}
N_FILES = len(PACKAGE_FILES)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pins_file(tmp_path: Path, *targets: tuple[str, str, Path]) -> Path:
    """A pin file of local-path targets (name, package, schema file relative to tmp_path)."""
    lines = []
    for name, package, schema in targets:
        lines += [
            "[[target]]",
            f'name = "{name}"',
            f'package = "{package}"',
            f'source = "{schema.relative_to(tmp_path).as_posix()}"',
            f'sha256 = "{sha256_of(schema)}"',
            "",
        ]
    path = tmp_path / "pins.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run_cli_tty(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return (status, text seen)."""
    master, slave = pty.openpty()
    merged = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "TERM": "xterm",
    }
    merged.update(env or {})
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_codegen", *map(str, args)],
        cwd=cwd,
        env=merged,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the child has closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    status = process.wait(timeout=600)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    return status, text


@pytest.fixture
def schema_file(tmp_path: Path, minimal_schema: Schema) -> Path:
    return write_json(tmp_path / "schemas" / "ok.json", minimal_schema)


@pytest.fixture
def broken_file(tmp_path: Path, minimal_schema: Schema) -> Path:
    minimal_schema["$defs"]["PingRequest"]["properties"]["bar"] = {"$ref": "#/$defs/Missing"}
    return write_json(tmp_path / "schemas" / "broken.json", minimal_schema)


def generate(tmp_path: Path, schema: Path, package: str = "pkg", *extra: str) -> CliResult:
    return run_cli(
        "generate",
        "--schema",
        schema,
        "--package",
        package,
        "--out",
        tmp_path / "out",
        *extra,
        cwd=tmp_path,
    )


# --- atomic writes ----------------------------------------------------------------------------


def test_a_failed_generate_leaves_the_existing_package_untouched(
    tmp_path: Path, schema_file: Path, broken_file: Path
) -> None:
    assert generate(tmp_path, schema_file).returncode == 0
    package = tmp_path / "out" / "pkg"
    (package / "notes.txt").write_text("kept\n", encoding="utf-8")
    before = tree_state(package)
    result = generate(tmp_path, broken_file)
    assert result.returncode == 2, result.describe()
    assert tree_state(package) == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "pkg"
    ], "staging directory left behind"


def test_a_successful_generate_removes_stale_files(tmp_path: Path, schema_file: Path) -> None:
    assert generate(tmp_path, schema_file).returncode == 0
    package = tmp_path / "out" / "pkg"
    expected = tree_bytes(package)
    (package / "stale.py").write_text("OLD = 1\n", encoding="utf-8")
    (package / "sub").mkdir()
    (package / "sub" / "old.txt").write_text("old\n", encoding="utf-8")
    (package / "models.py").write_text("# hand-edited\n", encoding="utf-8")
    result = generate(tmp_path, schema_file)
    assert result.returncode == 0, result.describe()
    assert tree_bytes(package) == expected
    assert not (package / "sub").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "pkg"
    ], "staging directory left behind"


def test_regenerating_an_up_to_date_package_rewrites_nothing(
    tmp_path: Path, schema_file: Path
) -> None:
    first = generate(tmp_path, schema_file)
    assert first.returncode == 0, first.describe()
    assert f"1 target(s): {len(PACKAGE_FILES)} file(s) written, 0 unchanged" in first.stdout
    package = tmp_path / "out" / "pkg"
    assert set(tree_bytes(package)) == PACKAGE_FILES
    before = tree_state(package)
    again = generate(tmp_path, schema_file)
    assert again.returncode == 0, again.describe()
    assert f"1 target(s): 0 file(s) written, {len(PACKAGE_FILES)} unchanged" in again.stdout
    assert tree_state(package) == before, "an up-to-date package was rewritten"


def test_vendor_runtime_writes_one_copy_the_package_imports_and_checks_it(
    tmp_path: Path, schema_file: Path
) -> None:
    import acp_runtime

    out = tmp_path / "out"
    done = run_cli(
        "generate",
        "--schema",
        schema_file,
        "--package",
        "pkg",
        "--out",
        out,
        "--vendor-runtime",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.describe()
    vendored = out / "acp_runtime"
    source = Path(acp_runtime.__file__).parent
    copied = {p.relative_to(vendored).as_posix() for p in vendored.rglob("*") if p.is_file()}
    expected = {
        p.relative_to(source).as_posix()
        for p in source.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert copied == expected | {"py.typed", "VENDORED.md"}
    for name in expected:
        assert (vendored / name).read_bytes() == (source / name).read_bytes(), name
    assert sorted(p.name for p in out.iterdir()) == [
        "acp_runtime",
        "pkg",
    ]  # one copy beside the bindings
    code = "import acp_runtime, pkg; print(acp_runtime.__file__); print(pkg.PingRequest.__mro__[1].__module__)"
    env = {**os.environ, "PYTHONPATH": str(out)}
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == [str(vendored / "__init__.py"), "acp_runtime.models.base"]
    clean = run_cli(
        "generate",
        "--schema",
        schema_file,
        "--package",
        "pkg",
        "--out",
        out,
        "--vendor-runtime",
        "--check",
        cwd=tmp_path,
    )
    assert clean.returncode == 0, clean.describe()
    (vendored / "jsonrpc" / "limits.py").write_text("edited\n", encoding="utf-8")
    drift = run_cli(
        "generate",
        "--schema",
        schema_file,
        "--package",
        "pkg",
        "--out",
        out,
        "--vendor-runtime",
        "--check",
        cwd=tmp_path,
    )
    assert (
        drift.returncode == 1 and "acp_runtime/jsonrpc/limits.py" in drift.stdout
    ), drift.describe()


def test_a_failure_in_the_second_target_writes_nothing_for_any_target(
    tmp_path: Path, schema_file: Path, broken_file: Path
) -> None:
    good_only = pins_file(tmp_path, ("first", "first_pkg", schema_file))
    assert run_cli("generate", "--pins", good_only, "--out", "out", cwd=tmp_path).returncode == 0
    existing = tree_state(tmp_path / "out" / "first_pkg")
    (tmp_path / "out" / "first_pkg" / "stale.py").write_text("STALE = 1\n", encoding="utf-8")
    existing = tree_state(tmp_path / "out" / "first_pkg")
    both = pins_file(
        tmp_path,
        ("first", "first_pkg", schema_file),
        ("second", "second_pkg", broken_file),
        ("third", "third_pkg", schema_file),
    )
    result = run_cli("generate", "--pins", both, "--out", "out", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert result.stderr.startswith(
        "error[dangling-ref] schemas/broken.json#/$defs/PingRequest/properties/bar"
    ), result.describe()
    assert "Traceback" not in result.output
    assert tree_state(tmp_path / "out" / "first_pkg") == existing, "the first target was written"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["first_pkg"]


def test_every_target_of_a_pin_file_and_a_chosen_one(tmp_path: Path, schema_file: Path) -> None:
    other = write_json(
        tmp_path / "schemas" / "other.json",
        {
            "$defs": {
                "EchoRequest": {
                    "type": "object",
                    "x-method": "echo",
                    "x-side": "client",
                    "properties": {"text": {"type": "string"}},
                }
            }
        },
    )
    pins = pins_file(tmp_path, ("one", "pkg_one", schema_file), ("two", "nested.pkg_two", other))
    result = run_cli("generate", "--pins", pins, "--out", "all", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert f"2 target(s): {2 * N_FILES} file(s) written" in result.stdout  # one method module each
    assert set(tree_bytes(tmp_path / "all" / "pkg_one")) == PACKAGE_FILES
    assert (
        "class EchoRequest"
        in (tmp_path / "all" / "nested" / "pkg_two" / "_models" / "echo_request.py").read_text()
    )
    chosen = run_cli("generate", "two", "--pins", pins, "--out", "chosen", cwd=tmp_path)
    assert chosen.returncode == 0, chosen.describe()
    assert [p.name for p in (tmp_path / "chosen").iterdir()] == ["nested"]
    unknown = run_cli("generate", "three", "--pins", pins, "--out", "chosen", cwd=tmp_path)
    assert unknown.returncode == 2, unknown.describe()
    assert (
        unknown.stderr.strip()
        == f"error[unknown-target] {pins}: no pinned target 'three' (known: one, two)"
    )


def test_check_on_a_missing_package_is_one_line_not_a_diff_of_every_file(
    tmp_path: Path, schema_file: Path
) -> None:
    result = generate(tmp_path, schema_file, "pkg", "--check")
    assert result.returncode == 1, result.describe()
    assert result.stdout.splitlines()[0] == f"pkg: not generated yet ({N_FILES} file(s) to write)"
    assert "+++" not in result.stdout and len(result.stdout.splitlines()) == 2, result.stdout
    hint = f"out of date: run `acp-codegen generate --schema {schema_file} --package pkg --out {tmp_path / 'out'}`"
    assert result.stderr.startswith(hint), result.stderr
    assert not (tmp_path / "out").exists()


def test_check_shows_the_diff_stat_shows_counts_and_quiet_shows_neither(
    tmp_path: Path, schema_file: Path
) -> None:
    assert generate(tmp_path, schema_file).returncode == 0
    models = tmp_path / "out" / "pkg" / "enums.py"
    models.write_text(models.read_text(encoding="utf-8") + "# one\n# two\n", encoding="utf-8")
    (tmp_path / "out" / "pkg" / "stale.py").write_text("X = 1\n", encoding="utf-8")
    diff = generate(tmp_path, schema_file, "pkg", "--check")
    assert diff.returncode == 1
    assert (
        "--- a/pkg/enums.py\n+++ b/pkg/enums.py\n" in diff.stdout
        and "-# one\n-# two\n" in diff.stdout
    )
    stat = generate(tmp_path, schema_file, "pkg", "--check", "--stat")
    assert stat.returncode == 1
    assert stat.stdout.splitlines()[:3] == [
        " pkg/enums.py | +0 -2",
        " pkg/stale.py | +0 -1",
        " 2 file(s) changed, 0 insertion(s)(+), 3 deletion(s)(-)",
    ], stat.stdout
    quiet = generate(tmp_path, schema_file, "pkg", "--check", "-q")
    assert quiet.returncode == 1
    assert re.fullmatch(
        r"1 target\(s\) checked, 1 out of date \(\d+\.\d\ds\)\n", quiet.stdout
    ), quiet.stdout
    assert quiet.stderr.startswith("out of date: run `acp-codegen generate"), quiet.stderr


def test_the_same_bytes_named_by_another_source_are_up_to_date(
    tmp_path: Path, schema_file: Path
) -> None:
    assert generate(tmp_path, schema_file).returncode == 0
    copy = tmp_path / "elsewhere" / "same.json"
    copy.parent.mkdir()
    copy.write_bytes(schema_file.read_bytes())
    same = generate(tmp_path, copy, "pkg", "--check")
    assert same.returncode == 0, same.describe()
    changed = write_json(
        tmp_path / "elsewhere" / "other.json",
        {**json.loads(schema_file.read_bytes()), "title": "Other"},
    )
    other = generate(tmp_path, changed, "pkg", "--check", "-q")
    assert (
        other.returncode == 1
    ), other.describe()  # other bytes: the recorded source does not hide that


def test_a_path_checks_clean_against_the_npm_spec_of_the_same_file(
    tmp_path: Path, pinned_sources: PinFile
) -> None:
    pin = pinned_sources.get("acp_v1")
    assert pin is not None
    written = run_cli("generate", "acp_v1", "--out", tmp_path / "out", "-q", cwd=tmp_path)
    assert written.returncode == 0, written.describe()
    cached = tmp_path / "v1.json"
    cached.write_bytes(load_source(pin.source, expected_sha256=pin.sha256).raw)
    checked = run_cli(
        "generate",
        "--schema",
        cached,
        "--package",
        "acp_v1",
        "--out",
        tmp_path / "out",
        "--check",
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.describe()


# --- what is printed --------------------------------------------------------------------------


def test_generate_off_a_terminal_prints_only_the_summary(tmp_path: Path, schema_file: Path) -> None:
    result = generate(tmp_path, schema_file)
    assert result.returncode == 0, result.describe()
    assert result.stderr == ""
    pin = rf"pkg: {re.escape(str(schema_file))} has sha256 {sha256_of(schema_file)} \(`acp-codegen init \S+ --package pkg` pins it\)\n"
    assert re.fullmatch(
        rf"{pin}1 target\(s\): {N_FILES} file\(s\) written, 0 unchanged \(\d+\.\d\ds\)\n",
        result.stdout,
    ), result.stdout


def test_generate_on_a_terminal_shows_progress_unless_quiet(
    tmp_path: Path, schema_file: Path
) -> None:
    args = ("generate", "--schema", schema_file, "--package", "pkg", "--out", "out")
    status, text = run_cli_tty(*args, cwd=tmp_path)
    assert status == 0, text
    lines = [line for line in re.split(r"[\r\n]+", text) if line]
    assert f"generating pkg from {schema_file}" in text, text  # rich's progress, on stderr
    assert any(
        re.search(rf"pkg -> pkg: {N_FILES} written, 0 unchanged \(\d+\.\d\ds\)$", line)
        for line in lines
    ), text
    assert lines[-1].startswith(f"1 target(s): {N_FILES} file(s) written"), text
    status, text = run_cli_tty(*args, "--quiet", cwd=tmp_path)
    assert status == 0, text
    assert re.fullmatch(
        rf"pkg: .+ has sha256 [0-9a-f]{{64}} .+\n1 target\(s\): 0 file\(s\) written, {N_FILES} unchanged \(\d+\.\d\ds\)\n",
        text,
    ), text


# --- pull -------------------------------------------------------------------------------------


@pytest.mark.parametrize("quiet", [False, True], ids=["plain", "quiet"])
def test_pull_fetches_every_pin_and_prints_one_summary_line(
    tmp_path: Path, shared_dir: Path, pins: PinFile, quiet: bool
) -> None:
    cache = tmp_path / "cache"
    env = {"ACP_CODEGEN_CACHE": str(cache), "ACP_CODEGEN_SHARED": str(shared_dir)}
    result = run_cli("pull", *(["--quiet"] if quiet else []), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert result.stderr == ""
    assert re.fullmatch(
        rf"pulled {len(pins.targets)} source\(s\) in \d+\.\d\ds\n", result.stdout
    ), result.stdout
    for pin in pins:
        assert sha256_of(cache / pin.sha256) == pin.sha256


def test_pull_history_fetches_every_earlier_source_too(
    tmp_path: Path, shared_dir: Path, pins: PinFile
) -> None:
    env = {"ACP_CODEGEN_CACHE": str(tmp_path / "cache"), "ACP_CODEGEN_SHARED": str(shared_dir)}
    wanted = {(p.source, p.sha256) for pin in pins for p in (pin.pinned, *pin.history)}
    result = run_cli("pull", "--history", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert result.stdout.startswith(f"pulled {len(wanted)} source(s) in"), result.stdout
    for _, sha in wanted:
        assert sha256_of(tmp_path / "cache" / sha) == sha


def test_pull_on_a_terminal_lists_each_source_unless_quiet(
    tmp_path: Path, shared_dir: Path, pins: PinFile
) -> None:
    env = {"ACP_CODEGEN_CACHE": str(tmp_path / "cache"), "ACP_CODEGEN_SHARED": str(shared_dir)}
    status, text = run_cli_tty("pull", cwd=tmp_path, env=env)
    assert status == 0, text
    for pin in pins:
        assert f"{pin.source} (shared, sha256 {pin.sha256[:12]})" in text, text
    status, text = run_cli_tty("pull", "--quiet", cwd=tmp_path, env=env)
    assert status == 0, text
    assert re.fullmatch(rf"pulled {len(pins.targets)} source\(s\) in \d+\.\d\ds\n", text), text


def test_pull_reports_every_failure_once_and_exits_2(tmp_path: Path, schema_file: Path) -> None:
    good = pins_file(tmp_path, ("good", "good_pkg", schema_file))
    text = good.read_text(encoding="utf-8")
    bad = tmp_path / "bad-pins.toml"
    bad.write_text(
        text
        + "\n".join(
            [
                "[[target]]",
                'name = "moved"',
                'package = "moved_pkg"',
                'source = "schemas/gone.json"',
                f'sha256 = "{"1" * 64}"',
                "",
                "[[target]]",
                'name = "altered"',
                'package = "altered_pkg"',
                'source = "schemas/ok.json"',
                f'sha256 = "{"2" * 64}"',
                "",
            ]
        ),
        encoding="utf-8",
    )
    env = {"ACP_CODEGEN_CACHE": str(tmp_path / "cache")}
    result = run_cli("pull", "--pins", bad, "--quiet", env=env, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert result.stdout == "", result.describe()
    lines = result.stderr.splitlines()
    assert [line.split(" ")[0] for line in lines] == [
        "error[file-not-found]",
        "error[sha256-mismatch]",
    ], lines
    assert "Traceback" not in result.output
    ok = run_cli("pull", "--pins", good, env=env, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("pulled 1 source(s)"), ok.describe()
