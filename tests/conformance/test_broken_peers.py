"""Every planted defect of the small broken agents and clients in `peers/` is caught by the rule
that names it, by `probe agent` / `probe client`, and by `check-transcript` (the CLI) of the
probe's own recording, with the side that broke it; the same peers without a defect come out
clean under all of them.

The first eight agent defects are the issue's table (a user's recordings that the old checker
missed); the others add one per rule the probes can provoke.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.probing import (
    agent_command,
    check_transcript,
    cli,
    client_command,
    failed,
    probe,
    recorded,
)

AGENT_DEFECTS: dict[str, set[str]] = {
    "chunk-no-message-id": {"message-id-missing", "schema-invalid"},
    "tool-call-no-id": {"schema-invalid"},
    "plan-no-id": {"schema-invalid"},
    "session-true": {"schema-invalid"},
    "custom-tag": {"open-union-custom-tag"},
    "auth-type": {"auth-method-custom-type"},
    "auth-env": {"auth-env-unique"},
    "root-field": {"custom-root-field"},
    "version-higher": {"version-negotiation"},
    "no-parse-reply": {"parse-error-reply"},
    "unknown-result": {"method-not-found"},
    "unanswered": {"request-unanswered"},
    "echo-unknown-id": {"response-unknown-id"},
    "reuse-id": {"request-id-in-use"},
    "bad-jsonrpc": {"jsonrpc-envelope"},
    "garbage": {"unreadable-message"},
    "extension-method": {"extension-method-name"},
    "open-enum": {"open-enum-custom-value"},
    "auth-terminal-unadvertised": {"auth-terminal-unadvertised"},
    "notice-unadvertised": {"capability-gated-update"},  # v1: its schema gates notices
    "fs-unadvertised": {"capability-gated-request"},  # v1: fs/* and terminal/* exist there only
}
# what the probe must advertise to provoke a defect (its default client advertises auth.terminal)
AGENT_PROBE_OPTIONS: dict[str, list[str]] = {"auth-terminal-unadvertised": ["--capabilities", "{}"]}
CLIENT_DEFECTS: dict[str, set[str]] = {
    "bad-outcome": {"schema-invalid", "permission-outcome-offered"},
    "wrong-option": {"permission-outcome-offered"},
    "no-answer": {"request-unanswered"},
    "cancel-wrong-code": {"error-code-cancelled"},
    "before-init": {"initialize-first"},
    "logout": {"auth-without-methods"},
    "login-terminal": {"auth-login-terminal"},
    "login-unadvertised": {"auth-login-unadvertised"},
    "delete": {"capability-gated-request"},
    "image": {"capability-gated-content"},
    "root-field": {"custom-root-field"},
    "unknown-result": {"method-not-found"},
    "no-parse-reply": {"parse-error-reply"},
    "open-enum": {"open-enum-custom-value"},
    "bad-fs-answer": {"schema-invalid"},
    "bad-terminal-answer": {"schema-invalid"},
}


# The README's test command runs these defects (an unanswered request, an unreadable line, a bad
# answer, an ungated request); `nox -s slow` runs every defect (CI's time budget).
IN_THE_SUITE = frozenset({"unanswered", "garbage", "bad-outcome", "delete"})


def defects(table: dict[str, set[str]]) -> list[object]:
    """The table's defects as parameters, those outside IN_THE_SUITE marked slow."""
    return [
        pytest.param(d, marks=() if d in IN_THE_SUITE else pytest.mark.slow) for d in sorted(table)
    ]


def assert_caught_by_check_transcript(transcript: Path, rules: set[str], side: str) -> None:
    """`check-transcript FILE` exits 1 with exactly `rules`, each finding against `side`."""
    status, report = check_transcript(transcript)
    assert status == 1, report
    assert {f["rule"] for f in report["findings"]} == rules, report["findings"]
    assert {f["side"] for f in report["findings"]} == {side}, report["findings"]


@pytest.mark.parametrize("defect", defects(AGENT_DEFECTS))
def test_each_broken_agent_is_caught_by_its_rule_the_probe_and_check_transcript(
    defect: str, tmp_path: Path
) -> None:
    status, report = probe(
        "agent", agent_command(defect), tmp_path / "t.jsonl", *AGENT_PROBE_OPTIONS.get(defect, [])
    )
    assert status == 1
    assert failed(report) == AGENT_DEFECTS[defect]
    for rule in report["rules"]:
        if rule["status"] == "fail":
            assert all(f["side"] == "agent" for f in rule["findings"]), rule
    assert_caught_by_check_transcript(tmp_path / "t.jsonl", AGENT_DEFECTS[defect], "agent")


@pytest.mark.parametrize("defect", defects(CLIENT_DEFECTS))
def test_each_broken_client_is_caught_by_its_rule_the_probe_and_check_transcript(
    defect: str, tmp_path: Path
) -> None:
    status, report = probe("client", client_command(defect), tmp_path / "t.jsonl")
    assert status == 1
    assert failed(report) == CLIENT_DEFECTS[defect]
    for rule in report["rules"]:
        if rule["status"] == "fail":
            assert all(f["side"] == "client" for f in rule["findings"]), rule
    assert_caught_by_check_transcript(tmp_path / "t.jsonl", CLIENT_DEFECTS[defect], "client")


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_peers_without_a_defect_are_clean_everywhere(kind: str, tmp_path: Path) -> None:
    command = agent_command("") if kind == "agent" else client_command("")
    status, report = probe(kind, command, tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set(), report
    passed = {r["rule"] for r in report["rules"] if r["status"] == "pass"}
    assert {
        "schema-invalid",
        "custom-root-field",
        "request-unanswered",
        "parse-error-reply",
        "method-not-found",
    } <= passed
    checked = cli("check-transcript", str(tmp_path / "t.jsonl"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def updates_sent(transcript: Path) -> set[str]:
    """The `sessionUpdate` tags the probe (as agent) sent."""
    return {
        e["message"]["params"]["update"]["sessionUpdate"]
        for e in recorded(transcript)
        if e["from"] == "agent" and e["message"].get("method") == "session/update"
    }


@pytest.mark.parametrize("version", [1, 2])
def test_the_probe_sends_every_session_update_variant_of_the_schema(
    version: int, tmp_path: Path
) -> None:
    from acp_codegen.ir.nodes import TaggedUnion
    from acp_codegen.transcript.schema import pinned_for_version, resolve_revision

    # v1 gates notices and compaction on session.* capabilities: the client advertises them
    flags = ["--notices", "--compaction"] if version == 1 else []
    status, report = probe("client", client_command("", *flags), tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set(), report
    revision = pinned_for_version(1) if version == 1 else resolve_revision(None)
    assert revision is not None and report["schema"] == revision.label
    # under v1 the probe sends the stable schema's variants: what every v1 client must take
    union = (revision.stable or revision).protocol.by_def_name("SessionUpdate")
    assert isinstance(union, TaggedUnion)
    assert set(union.known_tags) <= updates_sent(tmp_path / "t.jsonl")
    assert {"_acp_codegen_probe", "probe_future_variant"} <= updates_sent(tmp_path / "t.jsonl")


def test_the_probe_sends_gated_updates_only_where_the_client_advertised_them(
    tmp_path: Path,
) -> None:
    status, report = probe("client", client_command("", "--v1"), tmp_path / "t.jsonl")
    assert (
        status == 0 and failed(report) == set() and report["schema"] == "acp_v1 (unstable)"
    ), report
    sent = updates_sent(tmp_path / "t.jsonl")
    assert (
        "agent_message_chunk" in sent
        and not {"notice", "compaction_update", "compaction_summary_chunk"} & sent
    )


def test_an_agent_answering_protocol_version_1_is_reported_and_checked_against_v1(
    tmp_path: Path,
) -> None:
    status, report = probe("agent", [*agent_command(""), "--v1"], tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set(), report
    assert report["schema"] == "acp_v1 (unstable)"
    assert any("negotiated protocol version 1" in note for note in report["notes"])
    methods = {e["message"].get("method") for e in recorded(tmp_path / "t.jsonl")}
    assert {"session/prompt", "session/cancel", "session/list", "session/close"} <= methods
