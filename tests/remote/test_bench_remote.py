"""bench/remote.py's load generator, smoke-sized: two node load processes of four connections
each against our server and the TypeScript SDK's `AcpServer`, over WebSocket and Streamable HTTP,
one prompt of five words per connection. Every update the agents send must be counted (the
script refuses a run that lost one), and the report must list both servers for both transports,
with their ratios. The long runs (16 to 4,096 connections) are `nox -s bench_remote`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.remote.support import ROOT

WORDS = 5
PER_TURN = WORDS + 3  # user_message, state running, one chunk per word, state idle


def test_two_load_processes_count_every_update_of_both_servers_on_both_transports(
    node: str, tmp_path: Path
) -> None:
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "remote.py"),
            "--connections=8",
            "--workers=2",
            "--transports=ws,http",
            "--servers=ours,ts",
            "--prompts=1",
            f"--words={WORDS}",
            "--no-warm-up",
            "--settle=0",
            f"--json={report_path}",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(report_path.read_text("utf-8"))
    runs = {(r["server"], r["transport"]): r for r in report["results"]}
    assert set(runs) == {("ours", "ws"), ("ts", "ws"), ("ours", "http"), ("ts", "http")}
    for run in runs.values():
        assert run["connections"] == 8
        assert run["load_processes"] == 2
        assert run["updates"] == run["expected"] == 8 * PER_TURN
        assert run["updates_per_s"] > 0 and run["p99_ms"] >= run["p50_ms"] > 0
    assert {(row["transport"], row["connections"]) for row in report["ratios"]} == {
        ("ws", 8),
        ("http", 8),
    }
    assert "ratios ours/ts" in done.stdout
