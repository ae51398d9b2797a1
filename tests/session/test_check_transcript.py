"""`acp-codegen check-transcript`: one fixture per rule plus a clean one, output formats, exit
statuses, and unreadable input.

Fixtures live in `transcripts/` (written by `make_transcripts.py`); `expected.json` lists the
(line, rule) pairs each must produce, taken from the marks in the cases, not from the checker.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_support import GENERATED, run_cli

from acp_codegen.errors import CodegenError
from acp_codegen.transcript.catalog import CATALOG
from acp_codegen.transcript.check import check
from acp_codegen.transcript.read import parse_transcript, read_transcript
from acp_codegen.transcript.rules import KNOWN_COMPACTION_STATUSES, KNOWN_STOP_REASONS, RULES

FIXTURES = Path(__file__).with_name("transcripts")
EXPECTED: dict[str, list[list[object]]] = json.loads(
    (FIXTURES / "expected.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_gives_exactly_its_marked_findings(name: str) -> None:
    findings = check(read_transcript(FIXTURES / name))
    assert [[f.line, f.rule] for f in findings] == EXPECTED[name]


def test_every_rule_has_a_fixture_that_breaks_it_and_one_clean_transcript() -> None:
    broken = {rule for pairs in EXPECTED.values() for _, rule in pairs}
    assert broken == set(RULES)
    assert EXPECTED["clean.jsonl"] == []


def test_known_values_are_the_draft_schema_enums() -> None:
    sys.path.insert(0, str(GENERATED))
    import acp_v2_draft as acp

    assert set(acp.StopReason.known_values()) == KNOWN_STOP_REASONS
    assert set(acp.CompactionStatus.known_values()) == KNOWN_COMPACTION_STATUSES


def test_findings_carry_the_session() -> None:
    lines = [
        {
            "from": "agent",
            "message": {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "other",
                    "update": {"sessionUpdate": "notice", "severity": "info", "title": ""},
                },
            },
        }
    ]
    findings = check(parse_transcript("\n".join(json.dumps(x) for x in lines)))
    assert [(f.line, f.rule, f.session) for f in findings] == [(1, "notice-empty-title", "other")]


def test_sessions_are_checked_independently() -> None:
    def update(session: str, update: dict[str, object]) -> str:
        return json.dumps(
            {
                "from": "agent",
                "message": {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": session, "update": update},
                },
            }
        )

    text = "\n".join(
        [
            update(
                "a",
                {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"},
            ),
            update(
                "b",
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "c",
                    "status": "in_progress",
                },
            ),
            update(
                "b",
                {
                    "sessionUpdate": "compaction_summary_chunk",
                    "compactionId": "c",
                    "content": {"type": "text", "text": "x"},
                },
            ),
        ]
    )
    assert check(parse_transcript(text)) == []


# -- the command -------------------------------------------------------------------------------


def test_clean_transcript_exits_0() -> None:
    result = run_cli("check-transcript", FIXTURES / "clean.jsonl")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().endswith("no findings")


def test_text_output_has_one_line_per_finding_with_its_line_and_rule() -> None:
    path = FIXTURES / "work-without-running.jsonl"
    result = run_cli("check-transcript", path)
    assert result.returncode == 1, result.describe()
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{path}:4: work-without-running: ")
    assert lines[1].startswith(f"{path}:11: work-without-running: ")
    assert lines[-1] == "2 finding(s)"


def test_json_output_lists_line_rule_and_message() -> None:
    result = run_cli(
        "check-transcript", FIXTURES / "update-after-cancelled-idle.jsonl", "--format", "json"
    )
    assert result.returncode == 1, result.describe()
    payload = json.loads(result.stdout)
    assert payload["count"] == 2
    assert [(f["line"], f["rule"]) for f in payload["findings"]] == [
        (9, "update-after-cancelled-idle"),
        (10, "update-after-cancelled-idle"),
    ]
    assert all(f["message"] and f["session"] == "s1" for f in payload["findings"])


def test_json_output_of_a_clean_transcript() -> None:
    result = run_cli("check-transcript", FIXTURES / "clean.jsonl", "--format", "json")
    assert result.returncode == 0, result.describe()
    assert json.loads(result.stdout)["findings"] == []


def test_rules_lists_every_rule() -> None:
    result = run_cli("check-transcript", "--rules", "--format", "json")
    assert result.returncode == 0, result.describe()
    listed = json.loads(result.stdout)
    assert [r["rule"] for r in listed] == [r.id for r in CATALOG]
    assert set(RULES) <= {r["rule"] for r in listed}
    assert all(
        r["source"] and r["binds"] in ("agent", "client", "sender", "receiver") for r in listed
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json\n", "error[transcript-line] {path}: line 1: not JSON"),
        (
            '{"from": "client", "message": {}}\n[1, 2]\n',
            "error[transcript-line] {path}: line 2: expected an object",
        ),
        (
            '\n{"from": "server", "message": {}}\n',
            "error[transcript-line] {path}: line 2: `from` must be",
        ),
        (
            '{"from": "agent", "message": [{"jsonrpc": "2.0"}]}\n',
            "error[transcript-line] {path}: line 1: `message` must be",
        ),
        (b"\xff\xfe\n", "error[transcript-unreadable] {path}: not UTF-8 text"),
    ],
    ids=["not-json", "not-object", "bad-from", "batch", "not-utf8"],
)
def test_an_unreadable_transcript_exits_2_with_one_error_line(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run_cli("check-transcript", path)
    assert result.returncode == 2, result.describe()
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(
        expected.format(path=path)
    ), result.describe()


def test_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    for path, reason in ((tmp_path / "absent.jsonl", "no such file"), (tmp_path, "is a directory")):
        result = run_cli("check-transcript", path)
        assert result.returncode == 2, result.describe()
        assert result.stderr.strip() == f"error[transcript-unreadable] {path}: {reason}" + (
            ", not a transcript file" if reason == "is a directory" else ""
        ), result.describe()
    missing = run_cli("check-transcript")
    assert missing.returncode == 2 and "Traceback" not in missing.output, missing.describe()


def test_an_empty_transcript_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    assert check(read_transcript(path)) == []
    with pytest.raises(CodegenError):
        parse_transcript("\n\n1\n")
