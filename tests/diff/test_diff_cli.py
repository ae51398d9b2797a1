"""`acp-codegen diff` through the CLI: formats, --fail-on, --rules, --series, --history, pins, errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from diff_support import FIXTURES, run_cli

from acp_codegen.diff.rules import RULES


def _pair(rule_id: str) -> tuple[str, str]:
    return str(FIXTURES / rule_id / "old.json"), str(FIXTURES / rule_id / "new.json")


def test_rules_lists_every_rule() -> None:
    text = run_cli("diff", "--rules")
    assert text.returncode == 0, text.describe()
    assert all(rule.id in text.stdout for rule in RULES)
    listed = json.loads(run_cli("diff", "--rules", "--format", "json").stdout)["rules"]
    assert [r["id"] for r in listed] == [r.id for r in RULES]
    assert {"id", "category", "level", "breaks", "purpose"} <= set(listed[0])


def test_json_format_and_default_fail_on() -> None:
    result = run_cli("diff", *_pair("FIELD_BECAME_REQUIRED"), "--format", "json")
    assert result.returncode == 1, result.describe()  # a breaking change
    payload = json.loads(result.stdout)
    assert payload["summary"] == {"breaking": 1, "warning": 0, "info": 0, "docs": 0}
    (change,) = payload["changes"]
    assert {"rule", "level", "breaks", "path", "message"} <= set(change)
    assert payload["old"]["sha256"] and payload["new"]["label"].endswith("new.json")


@pytest.mark.parametrize(
    ("rule_id", "fail_on", "status"),
    [
        ("FIELD_BECAME_REQUIRED", "none", 0),
        ("FIELD_REMOVED", "breaking", 0),  # a warning
        ("FIELD_REMOVED", "warning", 1),
        ("FIELD_ADDED", "warning", 0),  # info
        ("FIELD_ADDED", "any", 1),
    ],
)
def test_fail_on(rule_id: str, fail_on: str, status: int) -> None:
    result = run_cli("diff", *_pair(rule_id), "--fail-on", fail_on, "--format", "json")
    assert result.returncode == status, result.describe()


def test_no_docs_hides_description_changes() -> None:
    shown = run_cli("diff", *_pair("DESCRIPTION_CHANGED"), "--format", "json")
    hidden = run_cli(
        "diff", *_pair("DESCRIPTION_CHANGED"), "--format", "json", "--no-docs", "--fail-on", "any"
    )
    assert [c["rule"] for c in json.loads(shown.stdout)["changes"]] == ["DESCRIPTION_CHANGED"]
    assert json.loads(hidden.stdout)["changes"] == [] and hidden.returncode == 0


def test_markdown_is_the_default_off_a_terminal() -> None:
    result = run_cli("diff", *_pair("CLOSED_ENUM_VALUE_ADDED"))
    assert result.stdout.startswith("## `") and "### Breaking (1)" in result.stdout
    assert "breaks client" in result.stdout


def test_text_and_github_formats() -> None:
    text = run_cli("diff", *_pair("VARIANT_REMOVED"), "--format", "text")
    assert (
        "Warnings (2)" in text.stdout
        and "VARIANT_REMOVED" in text.stdout
        and "breaks agent" in text.stdout
    )
    github = run_cli("diff", *_pair("FIELD_BECAME_REQUIRED"), "--format", "github")
    assert github.stdout.startswith(
        "::error title=FIELD_BECAME_REQUIRED (breaks client)::PingRequest.sessionId: "
    )


def test_series_compares_consecutive_pairs() -> None:
    old, new = _pair("FIELD_ADDED")
    result = run_cli("diff", "--series", old, new, old, "--format", "json")
    series = json.loads(result.stdout)["series"]
    assert [[c["rule"] for c in r["changes"]] for r in series] == [
        ["FIELD_ADDED"],
        ["FIELD_REMOVED"],
    ]
    assert result.returncode == 0, result.describe()  # FIELD_REMOVED is a warning


def _pins(tmp_path: Path, *sources: str) -> Path:
    def sha(path: str) -> str:
        """sha256 of a file."""
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    *history, current = sources
    entries = ", ".join(f'{{ source = "{s}", sha256 = "{sha(s)}" }}' for s in history)
    text = f'[[target]]\nname = "draft"\npackage = "draft"\nsource = "{current}"\nsha256 = "{sha(current)}"\nhistory = [{entries}]\n'
    path = tmp_path / "pins.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_history_and_pinned_names(tmp_path: Path) -> None:
    old, new = _pair("REQUIRED_FIELD_ADDED")
    other = str(FIXTURES / "FIELD_ADDED" / "new.json")
    pins = _pins(tmp_path, old, new, other)
    history = run_cli("diff", "--history", "draft", "--pins", pins, "--format", "json")
    series = json.loads(history.stdout)["series"]
    assert len(series) == 2 and series[1]["new"]["label"].startswith("draft (")
    assert history.returncode == 1  # REQUIRED_FIELD_ADDED in the first pair
    named = run_cli("diff", old, "draft", "--pins", pins, "--format", "json", "--fail-on", "none")
    assert named.returncode == 0 and json.loads(named.stdout)["new"]["source"] == other


def test_bad_sources_exit_2_with_one_line_diagnostics(tmp_path: Path) -> None:
    not_acp = tmp_path / "plain.json"
    not_acp.write_text('{"type": "object"}', encoding="utf-8")
    result = run_cli("diff", str(tmp_path / "missing.json"), str(not_acp))
    assert result.returncode == 2, result.describe()
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 2 and lines[0].startswith("error[") and lines[1].startswith("error[not-acp]")
    )
    assert "Traceback" not in result.output and result.stdout == ""


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    old, _ = _pair("FIELD_ADDED")
    one = run_cli("diff", old)
    assert one.returncode == 2 and one.stderr.startswith("error[diff-usage]"), one.describe()
    unknown = run_cli("diff", old, "no_such_target", "--pins", _pins(tmp_path, old))
    assert unknown.returncode == 2 and "error[unknown-target]" in unknown.stderr, unknown.describe()
