"""`serve_versions` over a process's stdio: the routing rules on real pipes between processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.versions.versions_kit import initialize

AGENT = Path(__file__).with_name("routed_agent.py")
INFO = {"name": "t", "version": "0"}


def exchange(versions: str, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """Send each message to a fresh routed agent process; its answers (it exits at end of input)."""
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run(
        [sys.executable, str(AGENT), versions],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize(
    ("versions", "requested", "answered"),
    [("1,2", 1, 1), ("1,2", 2, 2), ("1,2", 9, 2), ("1", 2, 1)],
)
def test_the_version_asked_for_picks_the_implementation(
    versions: str, requested: int, answered: int
) -> None:
    (answer,) = exchange(versions, initialize(requested, info=INFO))
    assert answer["result"]["protocolVersion"] == answered


def test_a_v2_only_agent_asked_for_version_1_refuses_and_reads_on() -> None:
    refused, accepted = exchange(
        "2",
        {"jsonrpc": "2.0", "method": "session/cancel"},
        initialize(1),
        initialize(2, request_id=2, info=INFO),
    )
    assert refused["id"] == 1 and refused["error"]["code"] == -32022
    assert refused["error"]["data"] == {"requested": 1, "supported": [2]}
    assert accepted["id"] == 2 and accepted["result"]["protocolVersion"] == 2


def test_pre_initialize_requests_and_batches_are_answered_then_initialize_routes() -> None:
    answers = exchange(
        "1,2",
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}},
        [initialize(1)],
        initialize(1, request_id=3),
    )  # type: ignore[arg-type]
    assert [a["id"] for a in answers] == [1, None, 3]
    assert [a.get("error", {}).get("code") for a in answers] == [-32600, -32600, None]
