"""`probe client` sends `fs/*` and `terminal/*` requests exactly where the client advertised them
(v1, the revision that has them), checks what the client answers, and the probes' text report
and "not exercised" status say what they claim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_codegen.transcript.catalog import CATALOG
from tests.conformance.probing import (
    agent_command,
    check_transcript,
    cli,
    client_command,
    failed,
    probe,
    recorded,
    sent_methods,
    statuses,
)

FS = ["fs/read_text_file"]
TERMINAL = [
    "terminal/create",
    "terminal/wait_for_exit",
    "terminal/output",
    "terminal/kill",
    "terminal/release",
]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], []),  # v2: the revision has no fs/terminal methods
        (["--v1"], []),  # v1, nothing advertised
        (["--fs"], FS),
        (["--terminal"], TERMINAL),
        (["--fs", "--terminal"], FS + TERMINAL),
    ],
    ids=["v2", "v1-none", "fs", "terminal", "both"],
)
def test_the_probe_sends_fs_and_terminal_requests_only_where_the_client_advertised_them(
    flags: list[str], expected: list[str], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    status, report = probe("client", client_command("", *flags), transcript)
    assert status == 0 and failed(report) == set(), report
    assert [
        m for m in sent_methods(transcript, "agent") if m.startswith(("fs/", "terminal/"))
    ] == expected
    # every one of them was answered with a result, and the answers were checked against the schema
    asked = {
        e["message"]["id"]: e["message"]["method"]
        for e in recorded(transcript)
        if e["from"] == "agent" and e["message"].get("method") in expected and "id" in e["message"]
    }
    answered = {
        e["message"]["id"]
        for e in recorded(transcript)
        if e["from"] == "client" and "result" in e["message"]
    }
    assert set(asked) <= answered
    if expected:
        assert statuses(report)["capability-gated-request"] == "pass"
        assert check_transcript(transcript)[0] == 0


@pytest.mark.parametrize(
    ("defect", "method", "where"),
    [
        ("bad-fs-answer", "fs/read_text_file", "/result/content"),
        ("bad-terminal-answer", "terminal/create", "/result"),
    ],
)
def test_a_client_answering_fs_or_terminal_wrongly_is_caught(
    defect: str, method: str, where: str, tmp_path: Path
) -> None:
    status, report = probe("client", client_command(defect), tmp_path / "t.jsonl")
    assert status == 1 and failed(report) == {"schema-invalid"}, report
    [rule] = [r for r in report["rules"] if r["rule"] == "schema-invalid"]
    assert [
        (f["side"], f["message"].split(" ")[0], f.get("pointer")) for f in rule["findings"]
    ] == [("client", method, where)]


def test_the_probe_advertises_the_capabilities_it_is_given(tmp_path: Path) -> None:
    command = agent_command("auth-terminal-unadvertised")
    status, default = probe("agent", command, tmp_path / "a.jsonl")
    assert status == 0 and statuses(default)["auth-terminal-unadvertised"] == "pass", default
    status, bare = probe("agent", command, tmp_path / "b.jsonl", "--capabilities", "{}")
    assert status == 1 and failed(bare) == {"auth-terminal-unadvertised"}
    first = recorded(tmp_path / "b.jsonl")[0]["message"]
    assert first["method"] == "initialize" and first["params"]["capabilities"] == {}


@pytest.mark.parametrize(
    ("value", "error"),
    [("{", "--capabilities is not JSON"), ("[]", "--capabilities must be a JSON object")],
)
def test_bad_capabilities_are_a_one_line_error(value: str, error: str) -> None:
    done = cli("probe", "agent", "--capabilities", value, "--", *agent_command(""))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(
        f"error[bad-option] command line: {error}"
    ), done.stderr


def test_the_text_report_lists_every_rule_with_its_status_findings_and_a_summary(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "t.jsonl"
    done = cli(
        "probe",
        "agent",
        "--transcript",
        str(transcript),
        "--timeout",
        "3",
        "--turn-timeout",
        "5",
        "--exit-timeout",
        "3",
        "--",
        *agent_command("auth-env"),
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"probe agent: {' '.join(agent_command('auth-env'))}"
    assert lines[1] == "schema: acp_v2_draft"
    marks = {}
    for line in lines[2:]:
        found = re.match(r"(pass|FAIL|-   )  (\S+) +(.+)$", line)
        if found:
            marks[found[2]] = found[1].strip()
            assert found[3] == next(r.source for r in CATALOG if r.id == found[2])
    assert list(marks) == [r.id for r in CATALOG]
    assert (
        marks["auth-env-unique"] == "FAIL"
        and marks["schema-invalid"] == "pass"
        and marks["auth-login-terminal"] == "-"
    )
    failing = lines.index(next(x for x in lines if x.startswith("FAIL  auth-env-unique")))
    assert re.fullmatch(
        r" {8}line \d+: auth-env-unique: \[agent\] terminal method 'tty' repeats env name\(s\) LOGIN "
        r"\(at /result/authMethods/0/env\)",
        lines[failing + 1],
    )
    assert f"transcript: {transcript}" in lines
    counts = {m: list(marks.values()).count(m) for m in ("pass", "FAIL", "-")}
    assert counts["FAIL"] == 1
    assert lines[-1] == f"{counts['pass']} passed, 1 failed, {counts['-']} not exercised"


def test_rules_the_run_could_not_provoke_are_not_exercised_until_it_does(tmp_path: Path) -> None:
    auth_rules = ("auth-env-unique", "auth-terminal-unadvertised")
    _, clean = probe("agent", agent_command(""), tmp_path / "clean.jsonl")
    assert {rule: statuses(clean)[rule] for rule in auth_rules} == dict.fromkeys(
        auth_rules, "not-exercised"
    )
    # the probe is the client: the client-only authentication rules stay unexercised either way
    assert statuses(clean)["auth-login-terminal"] == "not-exercised"
    assert all(not r["findings"] for r in clean["rules"] if r["status"] == "not-exercised")
    _, broken = probe("agent", agent_command("auth-env"), tmp_path / "env.jsonl")
    assert {rule: statuses(broken)[rule] for rule in auth_rules} == {
        "auth-env-unique": "fail",
        "auth-terminal-unadvertised": "pass",
    }
