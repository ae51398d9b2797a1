"""Issue 33's probe requirements, each against a small broken peer of `peers/` through the CLI:
the new rules (an advertised method answered -32601, `$/cancel_request` ignored, a version echoed),
a green run that tested nothing failing, blame on the side that broke the rule first, v1 checked
against the pinned unstable schema with stable-only findings marked, `{agent_line}`, and no
traceback when a peer leaves early."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conformance.probing import (
    PEERS,
    agent_command,
    check_transcript,
    cli,
    client_command,
    failed,
    probe,
    statuses,
)

NEW_AGENT_DEFECTS: dict[str, tuple[set[str], list[str]]] = {
    # advertised (v2's `session` includes resume; v1's sessionCapabilities.close) yet -32601
    "unimplemented": ({"capability-unimplemented"}, []),
    "unimplemented-v1": ({"capability-unimplemented"}, []),
    # the PyPI SDK agent's defect: a prompt withdrawn with $/cancel_request runs on to end_turn
    "ignores-cancel-request": ({"cancel-request-honoured"}, ["--cancel-timeout", "1"]),
    # echoes the requested version: 999 on the probe's second connection
    "echo-version": ({"version-echoed"}, []),
    # fast-agent's defect: protocolVersion 2 over a v1 body
    "v1-body": ({"version-echoed"}, []),
}


@pytest.mark.parametrize("defect", sorted(NEW_AGENT_DEFECTS))
def test_each_new_agent_rule_catches_its_broken_agent(defect: str, tmp_path: Path) -> None:
    rules, options = NEW_AGENT_DEFECTS[defect]
    status, report = probe("agent", agent_command(defect), tmp_path / "t.jsonl", *options)
    assert status == 1 and report["exit_status"] == 1
    assert failed(report) == rules, report
    for rule in report["rules"]:
        if rule["status"] == "fail":
            assert all(f["side"] == "agent" for f in rule["findings"]), rule
    if defect in (
        "unimplemented",
        "unimplemented-v1",
        "v1-body",
    ):  # judged from the transcript alone
        code, checked = check_transcript(tmp_path / "t.jsonl")
        assert code == 1 and {f["rule"] for f in checked["findings"]} == rules, checked


def test_a_v1_body_under_version_2_is_read_as_v1_from_then_on(tmp_path: Path) -> None:
    _, report = probe("agent", agent_command("v1-body"), tmp_path / "t.jsonl")
    assert report["schema"] == "acp_v1 (unstable)", report["notes"]
    assert any("with a v1 body; the probe goes on in v1" in note for note in report["notes"])
    assert statuses(report)["schema-invalid"] == "pass"  # no cascade of v2 schema findings


def test_the_new_rules_pass_for_the_agent_without_a_defect(tmp_path: Path) -> None:
    status, report = probe("agent", agent_command(""), tmp_path / "t.jsonl")
    assert status == 0 and report["misses"] == [], report
    rules = statuses(report)
    assert {
        rules[r] for r in ("capability-unimplemented", "cancel-request-honoured", "version-echoed")
    } == {"pass"}
    assert any(
        "asked for protocol version 999, the agent answered 2" in note for note in report["notes"]
    )


def test_an_agent_advertising_no_session_capability_is_not_a_green_run(tmp_path: Path) -> None:
    # issue 33: such an agent got "14 passed, 0 failed" and exit 0 although no prompt was sent
    status, report = probe("agent", agent_command("no-session"), tmp_path / "t.jsonl")
    assert failed(report) == set()
    assert status == 1 and [m["what"] for m in report["misses"]] == ["session"], report["misses"]
    assert "advertises no session capability" in report["misses"][0]["why"]
    text = cli("probe", "agent", "--timeout", "3", "--", *agent_command("no-session"))
    assert (
        text.returncode == 1 and "MISS  session:" in text.stdout and "1 missed" in text.stdout
    ), text.stdout


def test_a_client_that_never_answers_a_v1_permission_request_is_blamed_not_the_agent(
    tmp_path: Path,
) -> None:
    # the v1 prompt's answer waits on the permission answer: the client broke the rule first
    status, report = probe(
        "client",
        client_command("no-answer", "--v1"),
        tmp_path / "t.jsonl",
        "--protocol-version",
        "1",
    )
    assert status == 1 and failed(report) == {"request-unanswered"}
    (rule,) = [r for r in report["rules"] if r["rule"] == "request-unanswered"]
    assert {f["side"] for f in rule["findings"]} == {"client"}, rule["findings"]
    assert any("kept the client's session/prompt" in f["message"] for f in rule["findings"]), rule[
        "findings"
    ]
    code, checked = check_transcript(tmp_path / "t.jsonl")
    assert code == 1 and {(f["rule"], f["side"]) for f in checked["findings"]} == {
        ("request-unanswered", "client")
    }


def test_v1_is_checked_against_the_unstable_schema_and_stable_only_findings_are_marked(
    tmp_path: Path,
) -> None:
    # sessionCapabilities.fork: v1's unstable schema has it, the stable one does not
    status, report = probe(
        "agent", agent_command("", "--v1", "--unstable-caps"), tmp_path / "t.jsonl"
    )
    assert status == 0 and failed(report) == set(), report
    assert report["schema"] == "acp_v1 (unstable)"
    marked = report["stable_only"]
    assert marked and all(
        "only the stable schema acp_v1 refuses it" in f["message"] for f in marked
    ), marked
    assert any(
        f["rule"] == "custom-root-field"
        and "'fork'" in f["message"]
        and "/sessionCapabilities" in f["pointer"]
        for f in marked
    ), marked
    code, checked = check_transcript(tmp_path / "t.jsonl")
    assert code == 0 and checked["stable_only"], checked
    text = cli("check-transcript", str(tmp_path / "t.jsonl"))
    assert "stable-only (not a failure)" in text.stdout


@pytest.mark.parametrize("form", ["separate", "embedded"])
def test_the_one_argument_agent_placeholder(form: str, tmp_path: Path) -> None:
    client = [sys.executable, str(PEERS / "fake_client.py")]
    command = (
        [*client, "--agent-line", "{agent_line}", "--v1"]
        if form == "separate"
        else [*client, "--agent={agent_line}"]
    )
    status, report = probe("client", command, tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set() and report["misses"] == [], report


def test_a_client_command_without_a_placeholder_is_refused_in_one_line() -> None:
    done = cli("probe", "client", "--", sys.executable, "-c", "pass")
    assert (
        done.returncode == 2
        and "{agent_line}" in done.stderr
        and len(done.stderr.splitlines()) == 1
    ), done.stderr


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_a_peer_that_exits_at_once_gives_a_report_not_a_traceback(
    kind: str, tmp_path: Path
) -> None:
    # issue 33: `probe client` crashed with ProcessLookupError when the client exited early
    command = ["sh", "-c", "exit 3"] if kind == "agent" else ["sh", "-c", "exit 3", "sh", "{agent}"]
    done = cli(
        "probe", kind, "--format", "json", "--timeout", "3", "--turn-timeout", "5", "--", *command
    )
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["misses"], report
    if kind == "client":
        assert any(
            "exited (status 3) without starting its agent" in note for note in report["notes"]
        ), report["notes"]


def test_probe_agent_asks_for_the_protocol_version_given(tmp_path: Path) -> None:
    _, report = probe("agent", agent_command(""), tmp_path / "t.jsonl", "--protocol-version", "1")
    first = json.loads((tmp_path / "t.jsonl").read_text(encoding="utf-8").split("\n")[0])["message"]
    assert first["method"] == "initialize" and first["params"]["protocolVersion"] == 1
    assert "clientCapabilities" in first["params"]  # asked in v1's own shape
    assert report["schema"] == "acp_v1 (unstable)", report
