"""Bad input: every broken source gets one clear error line, exit status 2, no traceback, and
nothing is written.

The line reads `error[code] FILE#POINTER: what is wrong`; each case checks the code, the file,
the JSON pointer where there is one, and the words that say what is wrong.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import CliResult, run_cli, write_json

Schema = dict[str, Any]


def _generate(
    tmp_path: Path, source: str | Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[CliResult, Path]:
    out = tmp_path / "out"
    result = run_cli(
        "generate",
        "--schema",
        source,
        "--package",
        "bad_pkg",
        "--out",
        out,
        *extra,
        cwd=tmp_path,
        env=env,
    )
    return result, out


def assert_one_error(result: CliResult, out: Path, code: str, *needles: str) -> str:
    """Exit 2, exactly one line of output (`error[code] ...` on stderr), nothing written."""
    assert result.returncode == 2, result.describe()
    assert "Traceback" not in result.output and "╭" not in result.output, result.describe()
    assert result.stdout == "", result.describe()
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.describe()
    line = lines[0]
    assert line.startswith(f"error[{code}] "), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    assert not out.exists() or not any(out.iterdir()), f"something was written to {out}"
    return line


def _dangling(s: Schema) -> None:
    s["$defs"]["PingRequest"]["properties"]["bar"] = {"$ref": "#/$defs/Missing"}


def _cycle(s: Schema) -> None:
    s["$defs"]["A"] = {"$ref": "#/$defs/B"}
    s["$defs"]["B"] = {"$ref": "#/$defs/A"}


def _union_cycle(s: Schema) -> None:  # aliases through a union: `A = B | None; B = A`
    s["$defs"]["A"] = {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]}
    s["$defs"]["B"] = {"allOf": [{"$ref": "#/$defs/A"}], "description": "B is A"}


def _list_cycle(s: Schema) -> None:  # an alias of a list of itself: `A = list[A]`
    s["$defs"]["A"] = {"type": "array", "items": {"$ref": "#/$defs/A"}}


def _no_defs(s: Schema) -> None:
    s.pop("$defs")
    s["type"] = "object"


def _no_method(s: Schema) -> None:
    for definition in s["$defs"].values():
        definition.pop("x-method")


def _bad_side(s: Schema) -> None:
    s["$defs"]["PingRequest"]["x-side"] = "server"


def _method_not_string(s: Schema) -> None:
    s["$defs"]["PingRequest"]["x-method"] = 5


def _empty_one_of(s: Schema) -> None:
    s["$defs"]["Choice"] = {"oneOf": []}


def _unsupported_ref(s: Schema) -> None:
    s["$defs"]["PingRequest"]["properties"]["bar"] = {"$ref": "other.json#/Foo"}


CASES: list[tuple[str, Callable[[Schema], None], str, tuple[str, ...]]] = [
    (
        "dangling-ref",
        _dangling,
        "dangling-ref",
        ("#/$defs/PingRequest/properties/bar:", "'#/$defs/Missing'", "points to no definition"),
    ),
    ("ref-cycle", _cycle, "ref-cycle", ("#/$defs/A:", "A -> B -> A")),
    ("union-alias-cycle", _union_cycle, "ref-cycle", ("#/$defs/A:", "A -> B -> A")),
    ("list-alias-cycle", _list_cycle, "ref-cycle", ("#/$defs/A:", "A -> A")),
    ("no-defs", _no_defs, "not-acp", ("#:", "no `$defs`")),
    ("no-x-method", _no_method, "not-acp", ("#:", "no `x-method` anywhere")),
    (
        "unknown-side",
        _bad_side,
        "unknown-side",
        ("#/$defs/PingRequest/x-side:", "'server'", "agent, client, both, protocol, proxy"),
    ),
    (
        "x-method-not-a-string",
        _method_not_string,
        "bad-method",
        ("#/$defs/PingRequest/x-method:", "non-empty string", "5"),
    ),
    ("empty-oneOf", _empty_one_of, "bad-schema", ("#/$defs/Choice/oneOf:", "non-empty array")),
    (
        "unsupported-ref",
        _unsupported_ref,
        "bad-ref",
        ("#/$defs/PingRequest/properties/bar:", "'other.json#/Foo'", "only #/$defs/"),
    ),
]


@pytest.mark.parametrize(
    ("break_it", "code", "needles"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_broken_schema(
    tmp_path: Path,
    minimal_schema: Schema,
    break_it: Callable[[Schema], None],
    code: str,
    needles: tuple[str, ...],
) -> None:
    break_it(minimal_schema)
    write_json(tmp_path / "broken.json", minimal_schema)
    result, out = _generate(tmp_path, "broken.json")
    line = assert_one_error(result, out, code, *needles)
    assert line.startswith(f"error[{code}] broken.json#"), line


def test_the_minimal_schema_itself_generates(tmp_path: Path, minimal_schema: Schema) -> None:
    """The control for the cases above: only the deliberate breakage makes them fail."""
    write_json(tmp_path / "ok.json", minimal_schema)
    result, out = _generate(tmp_path, "ok.json")
    assert result.returncode == 0, result.describe()
    assert (out / "bad_pkg" / "models.py").is_file()


def test_missing_file(tmp_path: Path) -> None:
    result, out = _generate(tmp_path, "nowhere/schema.json")
    assert_one_error(result, out, "file-not-found", "nowhere/schema.json", "no such file")


def test_invalid_json(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"$defs": {\n  "A": {,}\n}}\n', encoding="utf-8")
    result, out = _generate(tmp_path, "broken.json")
    assert_one_error(
        result, out, "invalid-json", "broken.json:", "invalid JSON at line 2, column 9"
    )


def test_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_bytes(b'{"$defs": {}}\n{"\xff"}')
    result, out = _generate(tmp_path, "broken.json")
    assert_one_error(result, out, "invalid-json", "broken.json:", "invalid UTF-8 at line 2")


def test_top_level_not_an_object(tmp_path: Path) -> None:
    write_json(tmp_path / "list.json", [1, 2])
    result, out = _generate(tmp_path, "list.json")
    assert_one_error(result, out, "not-acp", "list.json#:", "found an array")


def test_sha256_mismatch(tmp_path: Path, minimal_schema: Schema) -> None:
    write_json(tmp_path / "ok.json", minimal_schema)
    result, out = _generate(tmp_path, "ok.json", "--sha256", "0" * 64)
    assert_one_error(
        result, out, "sha256-mismatch", "ok.json", "expected sha256 " + "0" * 64, "got "
    )


def test_url_that_cannot_be_fetched(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/x.json"  # the discard port: nothing listens there
    result, out = _generate(tmp_path, url, env={"ACP_CODEGEN_CACHE": str(tmp_path / "cache")})
    assert_one_error(result, out, "fetch-failed", url, "cannot fetch")


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_npm_package_that_cannot_be_fetched(tmp_path: Path) -> None:
    source = "npm:@acp-codegen-tests/no-such-package@0.0.0#schema.json"
    result, out = _generate(tmp_path, source, env={"ACP_CODEGEN_CACHE": str(tmp_path / "cache")})
    assert_one_error(
        result, out, "fetch-failed", source, "npm pack @acp-codegen-tests/no-such-package@0.0.0"
    )


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("npm:left-pad", "malformed npm source"),
        ("github:owner/repo#x.json", "malformed github source"),
    ],
)
def test_malformed_source_spec(tmp_path: Path, source: str, needle: str) -> None:
    result, out = _generate(tmp_path, source)
    assert_one_error(result, out, "bad-source", source, needle)


@pytest.mark.parametrize("package", ["./escape", "..escape", "has-dash", "class", "a..b", ""])
def test_package_that_is_not_a_dotted_identifier(
    tmp_path: Path, minimal_schema: Schema, package: str
) -> None:
    """`--package ./x` once resolved to `/x` (outside --out) and replaced that directory."""
    write_json(tmp_path / "ok.json", minimal_schema)
    out = tmp_path / "out"
    result = run_cli(
        "generate", "--schema", "ok.json", "--package", package, "--out", out, cwd=tmp_path
    )
    assert_one_error(result, out, "bad-package", repr(package), "not a dotted Python identifier")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.json"]


def test_output_path_that_cannot_be_written(tmp_path: Path, minimal_schema: Schema) -> None:
    write_json(tmp_path / "ok.json", minimal_schema)
    (tmp_path / "occupied").write_text("a file, not a directory\n", encoding="utf-8")
    result = run_cli(
        "generate", "--schema", "ok.json", "--package", "p", "--out", "occupied", cwd=tmp_path
    )
    assert result.returncode == 2, result.describe()
    assert "Traceback" not in result.output and "╭" not in result.output, result.describe()
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("error[write-failed] occupied/p: "), result.describe()
    assert (tmp_path / "occupied").read_text(encoding="utf-8") == "a file, not a directory\n"


def test_several_problems_are_all_reported_one_line_each(
    tmp_path: Path, minimal_schema: Schema
) -> None:
    _dangling(minimal_schema)
    _bad_side(minimal_schema)
    write_json(tmp_path / "broken.json", minimal_schema)
    result, out = _generate(tmp_path, "broken.json")
    assert result.returncode == 2, result.describe()
    codes = sorted(line.split("]")[0] for line in result.stderr.splitlines())
    assert codes == ["error[dangling-ref", "error[unknown-side"], result.describe()
    assert not out.exists()


# --- things that look like keywords but are not: no false alarms ------------------------------


def test_property_names_and_data_are_not_mistaken_for_keywords(
    tmp_path: Path, minimal_schema: Schema
) -> None:
    props = minimal_schema["$defs"]["PingRequest"]["properties"]
    props["x-side"] = {"type": "string"}  # a property called x-side
    props["$ref"] = {"type": "string"}  # a property called $ref
    props["options"] = {
        "type": "object",
        "default": {"$ref": "not a reference", "x-side": "nobody"},
    }
    props["oneOf"] = {"type": "array", "items": {"type": "string"}, "examples": [{"oneOf": []}]}
    write_json(tmp_path / "ok.json", minimal_schema)
    result, out = _generate(tmp_path, "ok.json")
    assert result.returncode == 0, result.describe()
    assert (out / "bad_pkg" / "models.py").is_file()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--package", "p"), "--package only applies to an ad-hoc --schema source"),
        (("--sha256", "0" * 64), "--sha256 only applies to an ad-hoc --schema source"),
        (("--package", "p", "--sha256", "0" * 64), "--package and --sha256 only apply"),
        (
            ("acp_v1", "--schema", "ok.json"),
            "give pinned target names (acp_v1) or --schema, not both",
        ),
    ],
)
def test_options_that_do_not_go_together(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    """Options that would otherwise be silently ignored are a usage error, and nothing is written."""
    out = tmp_path / "out"
    result = run_cli("generate", *args, "--out", out, cwd=tmp_path)
    assert_one_error(result, out, "bad-option", needle)
