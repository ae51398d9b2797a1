"""check-transcript's proxy-chain rules on transcripts recorded at a proxy's boundary (`client` the
conductor, `agent` the proxy): a pass-through proxy's transcript passes every one of them, and
each broken fixture fails exactly the rule it breaks, through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_codegen.sources import project_root
from acp_codegen.transcript.conformance import check_items
from acp_codegen.transcript.proxy import PROXY_RULES
from acp_codegen.transcript.read import read_transcript

ROOT = project_root()
FIXTURES = Path(__file__).resolve().parent / "proxy_transcripts"

BROKEN = {
    "broken-initialize-kind.jsonl": {(1, "proxy-initialize-kind", "client")},
    "broken-initialize-not-forwarded.jsonl": {(2, "proxy-initialize-forwarded", "agent")},
    "broken-protocol-version.jsonl": {(4, "proxy-protocol-version", "agent")},
    "broken-envelope.jsonl": {
        (6, "proxy-successor-envelope", "agent"),
        (7, "proxy-successor-envelope", "agent"),
        (8, "proxy-successor-envelope", "agent"),
        (8, "schema-invalid", "agent"),
    },
    "broken-forwarding.jsonl": {(6, "successor-forwarding", "agent")},
    "broken-metadata.jsonl": {
        (6, "proxy-metadata-preserved", "agent"),
        (8, "proxy-metadata-preserved", "agent"),
        (10, "proxy-metadata-preserved", "agent"),
    },
}


def test_a_pass_through_proxy_transcript_passes_every_proxy_rule() -> None:
    result = check_items(read_transcript(FIXTURES / "passthrough.jsonl"))
    assert result.findings == ()
    assert {rule: result.status(rule) for rule in PROXY_RULES} == dict.fromkeys(PROXY_RULES, "pass")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_fixture_fails_its_rule(name: str) -> None:
    result = check_items(read_transcript(FIXTURES / name))
    assert {(f.line, f.rule, f.side) for f in result.findings} == BROKEN[name]


def test_the_command_reports_a_dropped_meta_and_lists_the_rules() -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "acp_codegen", *args],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    broken = cli("check-transcript", "--format", "json", str(FIXTURES / "broken-metadata.jsonl"))
    assert broken.returncode == 1, broken.stderr
    found = json.loads(broken.stdout)["findings"]
    assert {f["rule"] for f in found} == {"proxy-metadata-preserved"}
    assert any("_meta 'seq'" in f["message"] for f in found)
    listed = cli("check-transcript", "--rules")
    assert all(rule in listed.stdout for rule in PROXY_RULES)


def test_a_connection_without_proxy_messages_exercises_no_proxy_rule() -> None:
    items = list(read_transcript(FIXTURES / "broken-initialize-kind.jsonl"))[:1]
    result = check_items(items)
    assert all(result.status(rule) == "not-exercised" for rule in PROXY_RULES)
