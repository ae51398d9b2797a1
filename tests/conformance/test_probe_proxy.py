"""`probe proxy` end to end: the probe starts a real proxy process, is its conductor, client and
successor over its stdio, and judges forwarding, preserved `_meta` and unknown fields, and
plain `initialize`. Our pass-through proxy passes; a proxy that drops `_meta` fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_codegen.sources import project_root
from acp_codegen.transcript.conformance import check_items
from acp_codegen.transcript.proxy import PROXY_RULES
from acp_codegen.transcript.read import read_transcript

ROOT = project_root()
PASS_THROUGH = ROOT / "tests" / "proxies" / "passthrough_proxy.py"
PEERS = Path(__file__).resolve().parent / "peers"
META_DROPPING = PEERS / "meta_dropping_proxy.py"
ROLE_BLIND = PEERS / "role_blind_proxy.py"


def probe(script: Path, transcript: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "probe", "proxy", "--format", "json"]
        + ["--transcript", str(transcript), "--timeout", "5", "--", sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {rule["rule"]: rule["status"] for rule in report["rules"]}


def test_our_pass_through_proxy_passes_every_proxy_rule(tmp_path: Path) -> None:
    status, report = probe(PASS_THROUGH, tmp_path / "wire.jsonl")
    assert status == 0, report
    assert report["misses"] == [] and report["failed"] == 0
    assert {rule: statuses(report)[rule] for rule in PROXY_RULES} == dict.fromkeys(
        PROXY_RULES, "pass"
    )
    # the recorded wire is a proxy-boundary transcript check-transcript accepts as it is
    assert check_items(read_transcript(tmp_path / "wire.jsonl")).findings == ()


def test_a_proxy_that_drops_meta_fails_the_preservation_rule(tmp_path: Path) -> None:
    status, report = probe(META_DROPPING, tmp_path / "wire.jsonl")
    assert status == 1
    failed = {rule for rule, state in statuses(report).items() if state == "fail"}
    assert failed == {"proxy-metadata-preserved"}
    findings = next(r for r in report["rules"] if r["rule"] == "proxy-metadata-preserved")
    methods = {f["message"].split(" of line")[0].rsplit(" ", 1)[-1] for f in findings["findings"]}
    assert methods == {"session/new", "session/prompt", "_acp-probe/echo"}
    assert all(f["side"] == "agent" for f in findings["findings"])


def test_a_proxy_that_acts_as_one_after_plain_initialize_fails_the_kind_rule(
    tmp_path: Path,
) -> None:
    status, report = probe(ROLE_BLIND, tmp_path / "wire.jsonl")
    assert status == 1
    failed = {rule for rule, state in statuses(report).items() if state == "fail"}
    assert failed == {"proxy-initialize-kind"}
    rule = next(r for r in report["rules"] if r["rule"] == "proxy-initialize-kind")
    assert [f["side"] for f in rule["findings"]] == ["agent"]
    assert "plain initialize" in rule["findings"][0]["message"]
