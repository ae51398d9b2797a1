"""Hostile schema input: each is one clear error line (exit 2, nothing written, the file and the
JSON pointer named) in every command that reads a schema, never a traceback.

Issue 13 findings: a 5,000-digit integer (ValueError from Python's int digit limit), numbers
out of the double range, a lone surrogate escape (UnicodeEncodeError when writing),
`$defs` entries that are `null` or a string (accepted silently) and an invalid `pattern`. (Deep
nesting is no error: `test_depth.py`.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from generator_support import (
    Schema,
    assert_one_error,
    cli,
    generate,
    minimal,
    mutated,
    ping,
    write_schema,
)

HUGE = "9" * 5000  # over Python's default limit of 4300 digits for int <-> str


def _huge_maximum(schema: Schema) -> None:
    ping(schema)["properties"]["bar"]["maxLength"] = "@HUGE@"


def _as_text(schema: Schema) -> str:
    return (
        json.dumps(schema)
        .replace('"@HUGE@"', HUGE)
        .replace('"@INF@"', "1e999")
        .replace('"@NAN@"', "NaN")
    )


def test_huge_integer_in_generate(tmp_path: Path) -> None:
    run, out = generate(tmp_path, _as_text(mutated(minimal, _huge_maximum)))
    assert_one_error(
        run,
        "bad-number",
        "hostile.json#/$defs/PingRequest/properties/bar/maxLength:",
        "5000 digits",
        "4300",
        out=out,
    )


def test_huge_integer_in_diff(tmp_path: Path) -> None:
    old = write_schema(tmp_path, minimal(), "old.json")
    new = write_schema(tmp_path, _as_text(mutated(minimal, _huge_maximum)), "new.json")
    run = cli("diff", old.name, new.name, cwd=tmp_path)
    assert_one_error(
        run, "bad-number", "new.json#/$defs/PingRequest/properties/bar/maxLength:", "5000 digits"
    )


def test_huge_integer_in_scaffold_schema(tmp_path: Path) -> None:
    source = write_schema(tmp_path, _as_text(mutated(minimal, _huge_maximum)))
    run = cli("scaffold", "agent", "my-agent", "--schema", source.name, cwd=tmp_path)
    assert_one_error(run, "bad-number", "hostile.json#/$defs/PingRequest/properties/bar/maxLength:")
    assert not (tmp_path / "my-agent").exists()


def test_huge_integer_in_check_transcript(tmp_path: Path) -> None:
    line = '{"from": "client", "message": {"jsonrpc": "2.0", "id": @HUGE@, "method": "initialize", "params": {}}}'
    (tmp_path / "t.jsonl").write_text(line.replace("@HUGE@", HUGE) + "\n", encoding="utf-8")
    run = cli("check-transcript", "t.jsonl", cwd=tmp_path)
    # In a transcript the number is the sender's defect: a finding on its line (the rest is still
    # checked), not an unreadable file.
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.describe()
    assert "t.jsonl:1: unreadable-message: [client]" in run.stdout and "5000 digits" in run.stdout


@pytest.mark.parametrize(
    ("token", "needle"), [("@INF@", "1e999 is out of range"), ("@NAN@", "NaN is not a JSON number")]
)
def test_non_finite_number(tmp_path: Path, token: str, needle: str) -> None:
    schema = mutated(
        minimal, lambda s: ping(s)["properties"].update(n={"type": "number", "maximum": token})
    )
    run, out = generate(tmp_path, _as_text(schema))
    assert_one_error(
        run, "bad-number", "#/$defs/PingRequest/properties/n/maximum:", needle, out=out
    )


def test_lone_surrogate(tmp_path: Path) -> None:
    text = json.dumps(minimal()).replace("Ask the agent", "Ask \\ud800 the agent")
    run, out = generate(tmp_path, text)
    assert_one_error(
        run, "bad-string", "#/$defs/PingRequest/description:", "\\ud800", "lone surrogate", out=out
    )


def test_a_surrogate_pair_is_fine(tmp_path: Path) -> None:
    """The control: a well-formed pair (an emoji) is text like any other."""
    text = json.dumps(minimal()).replace("Ask the agent", "Ask \\ud83d\\ude00 the agent")
    run, _ = generate(tmp_path, text)
    assert run.returncode == 0, run.describe()


@pytest.mark.parametrize(
    ("value", "shown"), [(None, "got null"), ("a string", "got the string 'a string'")]
)
def test_defs_entry_that_is_not_a_schema(tmp_path: Path, value: object, shown: str) -> None:
    run, out = generate(tmp_path, mutated(minimal, lambda s: s["$defs"].update(Broken=value)))
    assert_one_error(
        run, "bad-schema", "hostile.json#/$defs/Broken:", "must be a schema", shown, out=out
    )


def test_invalid_pattern(tmp_path: Path) -> None:
    schema = mutated(
        minimal,
        lambda s: ping(s)["properties"].update(p={"type": "string", "pattern": "(unclosed"}),
    )
    run, out = generate(tmp_path, schema)
    assert_one_error(
        run,
        "bad-pattern",
        "hostile.json#/$defs/PingRequest/properties/p/pattern:",
        "invalid regular expression",
        "'(unclosed'",
        out=out,
    )


def test_deep_json_is_an_error(tmp_path: Path) -> None:
    """Deeper than the JSON parser goes (the limit is Python's, not ours)."""
    depth = sys.getrecursionlimit() + 100
    text = json.dumps(minimal())[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    run, out = generate(tmp_path, text)
    assert_one_error(run, "invalid-json", "nested too deeply", out=out)
