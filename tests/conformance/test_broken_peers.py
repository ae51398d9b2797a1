"""Every planted defect of the small broken agents and clients in `peers/` is caught by the rule
that names it, by `probe agent` / `probe client`, and by `check-transcript` of the probe's own
recording; the same peers without a defect come out clean under all of them.

The first eight agent defects are the issue's table (a user's recordings that the old checker
missed); the others add one per rule the probes can provoke.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.sources import project_root
from codegen.transcript.conformance import check_items
from codegen.transcript.read import read_transcript

ROOT = project_root()
PEERS = Path(__file__).with_name("peers")
FAST = ["--timeout", "3", "--turn-timeout", "5", "--exit-timeout", "3"]

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
}
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
}


def probe(kind: str, command: list[str], transcript: Path) -> tuple[int, dict[str, object]]:
    """Run `acp-codegen probe KIND --format json --transcript FILE -- COMMAND`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "codegen", "probe", kind, "--format", "json", "--transcript",
                           str(transcript), *FAST, "--", *command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def failed(report: dict[str, object]) -> set[str]:
    """The rules a probe report marks failed."""
    return {r["rule"] for r in report["rules"] if r["status"] == "fail"}  # type: ignore[attr-defined, index]


def agent_command(defect: str) -> list[str]:
    return [sys.executable, str(PEERS / "fake_agent.py"), *(["--defect", defect] if defect else [])]


def client_command(defect: str) -> list[str]:
    return [sys.executable, str(PEERS / "fake_client.py"), *(["--defect", defect] if defect else []), "--", "{agent}"]


@pytest.mark.parametrize("defect", sorted(AGENT_DEFECTS))
def test_each_broken_agent_is_caught_by_its_rule_the_probe_and_check_transcript(defect: str, tmp_path: Path) -> None:
    status, report = probe("agent", agent_command(defect), tmp_path / "t.jsonl")
    assert status == 1
    assert failed(report) == AGENT_DEFECTS[defect]
    for rule in report["rules"]:  # type: ignore[attr-defined]
        if rule["status"] == "fail":
            assert all(f["side"] == "agent" for f in rule["findings"]), rule
    result = check_items(read_transcript(tmp_path / "t.jsonl"))
    assert {f.rule for f in result.findings} == AGENT_DEFECTS[defect]
    assert {f.side for f in result.findings} == {"agent"}


@pytest.mark.parametrize("defect", sorted(CLIENT_DEFECTS))
def test_each_broken_client_is_caught_by_its_rule_the_probe_and_check_transcript(defect: str, tmp_path: Path) -> None:
    status, report = probe("client", client_command(defect), tmp_path / "t.jsonl")
    assert status == 1
    assert failed(report) == CLIENT_DEFECTS[defect]
    result = check_items(read_transcript(tmp_path / "t.jsonl"))
    assert {f.rule for f in result.findings} == CLIENT_DEFECTS[defect]
    assert {f.side for f in result.findings} == {"client"}


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_peers_without_a_defect_are_clean_everywhere(kind: str, tmp_path: Path) -> None:
    command = agent_command("") if kind == "agent" else client_command("")
    status, report = probe(kind, command, tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set(), report
    passed = {r["rule"] for r in report["rules"] if r["status"] == "pass"}  # type: ignore[attr-defined]
    assert {"schema-invalid", "custom-root-field", "request-unanswered", "parse-error-reply", "method-not-found"} <= passed
    cli = subprocess.run([sys.executable, "-m", "codegen", "check-transcript", str(tmp_path / "t.jsonl")], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=False)
    assert cli.returncode == 0, cli.stdout + cli.stderr


def test_the_probe_sends_every_session_update_variant_of_the_schema(tmp_path: Path) -> None:
    from codegen.ir.nodes import TaggedUnion
    from codegen.transcript.schema import resolve_revision

    probe("client", client_command(""), tmp_path / "t.jsonl")
    sent = set()
    for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028
        if not line:
            continue
        item = json.loads(line)
        if item["from"] == "agent" and item.get("message", {}).get("method") == "session/update":
            sent.add(item["message"]["params"]["update"]["sessionUpdate"])
    union = resolve_revision(None).protocol.by_def_name("SessionUpdate")
    assert isinstance(union, TaggedUnion)
    assert set(union.known_tags) <= sent
    assert {"_acp_codegen_probe", "probe_future_variant"} <= sent


def test_an_agent_answering_protocol_version_1_is_reported_and_checked_against_v1(tmp_path: Path) -> None:
    status, report = probe("agent", [*agent_command(""), "--v1"], tmp_path / "t.jsonl")
    assert status == 0 and failed(report) == set(), report
    assert report["schema"] == "acp_v1"
    assert any("negotiated protocol version 1" in note for note in report["notes"])  # type: ignore[attr-defined]
    methods = {json.loads(x).get("message", {}).get("method") for x in (tmp_path / "t.jsonl").read_text(encoding="utf-8").split("\n") if x}
    assert {"session/prompt", "session/cancel", "session/list", "session/close"} <= methods
