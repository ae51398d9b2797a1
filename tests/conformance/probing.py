"""Running the probes and `check-transcript` through the CLI against the small peers in `peers/`
(shared by the conformance tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_codegen.sources import project_root

ROOT = project_root()
PEERS = Path(__file__).with_name("peers")
FAST = ["--timeout", "3", "--turn-timeout", "5", "--exit-timeout", "3"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m acp_codegen ARGS...` from the project root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "acp_codegen", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def probe(
    kind: str, command: list[str], transcript: Path, *options: str
) -> tuple[int, dict[str, Any]]:
    """`acp-codegen probe KIND --format json --transcript FILE [OPTIONS] -- COMMAND`: (exit status, report)."""
    done = cli(
        "probe",
        kind,
        "--format",
        "json",
        "--transcript",
        str(transcript),
        *FAST,
        *options,
        "--",
        *command,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def check_transcript(transcript: Path) -> tuple[int, dict[str, Any]]:
    """`acp-codegen check-transcript --format json FILE`: (exit status, report)."""
    done = cli("check-transcript", "--format", "json", str(transcript))
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def failed(report: dict[str, Any]) -> set[str]:
    """The rules a probe report marks failed."""
    return {r["rule"] for r in report["rules"] if r["status"] == "fail"}


def statuses(report: dict[str, Any]) -> dict[str, str]:
    """Rule ID -> pass / fail / not-exercised, from a probe report."""
    return {r["rule"]: r["status"] for r in report["rules"]}


def agent_command(defect: str, *flags: str) -> list[str]:
    """The fake agent, with a defect (or none) and flags."""
    return [
        sys.executable,
        str(PEERS / "fake_agent.py"),
        *(["--defect", defect] if defect else []),
        *flags,
    ]


def client_command(defect: str, *flags: str) -> list[str]:
    """The fake client, with a defect (or none) and flags, its agent command `{agent}`."""
    return [
        sys.executable,
        str(PEERS / "fake_client.py"),
        *(["--defect", defect] if defect else []),
        *flags,
        "--",
        "{agent}",
    ]


def recorded(transcript: Path) -> list[dict[str, Any]]:
    """The readable entries of a transcript (split on `\\n` only: U+2028 stays inside strings)."""
    entries = [
        json.loads(line) for line in transcript.read_text(encoding="utf-8").split("\n") if line
    ]
    return [e for e in entries if isinstance(e.get("message"), dict)]


def sent_methods(transcript: Path, sender: str) -> list[str]:
    """The methods `sender` sent, in order."""
    return [
        e["message"]["method"]
        for e in recorded(transcript)
        if e["from"] == sender and "method" in e["message"]
    ]
