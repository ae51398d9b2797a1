"""The scaffolded agent and client of this branch come out clean under both probes and under
`check-transcript` of their own recordings (run from source with PYTHONPATH, not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_codegen.sources import project_root

ROOT = project_root()


def run(args: list[str], cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{pythonpath}{os.pathsep}{ROOT}", "NO_COLOR": "1"}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scaffold")
    for kind in ("agent", "client"):
        done = run(
            [sys.executable, "-m", "acp_codegen", "scaffold", kind, str(base / f"my-{kind}")],
            ROOT,
            ROOT,
        )
        assert done.returncode == 0, done.stderr
    return base


def test_the_scaffolded_agent_is_clean_under_probe_agent(projects: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "agent.jsonl"
    done = run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "probe",
            "agent",
            "--format",
            "json",
            "--transcript",
            str(transcript),
            "--",
            sys.executable,
            "-m",
            "my_agent",
        ],
        tmp_path,
        projects / "my-agent",
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["failed"] == 0, done.stdout + done.stderr
    assert {r["rule"] for r in report["rules"] if r["status"] == "pass"} >= {
        "schema-invalid",
        "work-without-running",
        "method-not-found",
    }
    checked = run(
        [sys.executable, "-m", "acp_codegen", "check-transcript", str(transcript)], ROOT, ROOT
    )
    assert checked.returncode == 0, checked.stdout


def test_the_scaffolded_client_is_clean_under_probe_client_and_its_own_recording_checks_clean(
    projects: Path, tmp_path: Path
) -> None:
    own = tmp_path / "own.jsonl"
    done = run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "probe",
            "client",
            "--format",
            "json",
            "--",
            sys.executable,
            "-m",
            "my_client",
            "--yes",
            "--transcript",
            str(own),
            "Hello probe",
            "--",
            "{agent}",
        ],
        tmp_path,
        projects / "my-client",
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["failed"] == 0, done.stdout + done.stderr
    # the client's own view: nothing against the client; against the agent only what the probe
    # did on purpose (the client cannot know it was deliberate)
    checked = run(
        [sys.executable, "-m", "acp_codegen", "check-transcript", "--format", "json", str(own)],
        ROOT,
        ROOT,
    )
    findings = json.loads(checked.stdout)["findings"]
    assert [f for f in findings if f["side"] != "agent"] == [], findings
    assert {f["rule"] for f in findings} <= {
        "unreadable-message",
        "extension-method-name",
        "open-union-custom-tag",
    }


def test_the_scaffolded_pair_records_a_clean_transcript(projects: Path, tmp_path: Path) -> None:
    own = tmp_path / "pair.jsonl"
    agent = f"{sys.executable} -m my_agent"
    env_path = f"{projects / 'my-agent'}"
    done = run(
        [
            sys.executable,
            "-m",
            "my_client",
            "--yes",
            "--transcript",
            str(own),
            "Hello! Ask my permission first.",
            "--",
            "env",
            f"PYTHONPATH={env_path}",
            *agent.split(),
        ],
        tmp_path,
        projects / "my-client",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = run([sys.executable, "-m", "acp_codegen", "check-transcript", str(own)], ROOT, ROOT)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("version", [1, 2])
def test_both_probes_speak_the_protocol_version_given_to_the_scaffolded_pair(
    projects: Path, tmp_path: Path, version: int
) -> None:
    transcript = tmp_path / "agent.jsonl"
    agent = run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "probe",
            "agent",
            "--format",
            "json",
            "--transcript",
            str(transcript),
            "--protocol-version",
            str(version),
            "--",
            sys.executable,
            "-m",
            "my_agent",
        ],
        tmp_path,
        projects / "my-agent",
    )
    report = json.loads(agent.stdout)
    assert agent.returncode == 0 and report["misses"] == [], agent.stdout + agent.stderr
    first = json.loads(transcript.read_text(encoding="utf-8").split("\n")[0])["message"]
    assert first["params"]["protocolVersion"] == version
    client = run(
        [
            sys.executable,
            "-m",
            "acp_codegen",
            "probe",
            "client",
            "--format",
            "json",
            "--transcript",
            str(transcript),
            "--protocol-version",
            str(version),
            "--",
            sys.executable,
            "-m",
            "my_client",
            "--yes",
            "Hello probe",
            "--",
            "{agent}",
        ],
        tmp_path,
        projects / "my-client",
    )
    report = json.loads(client.stdout)
    assert client.returncode == 0 and report["failed"] == 0 and report["misses"] == [], (
        client.stdout + client.stderr
    )
    assert report["schema"] == ("acp_v1 (unstable)" if version == 1 else "acp_v2_draft")
    answer = next(
        json.loads(line)["message"]
        for line in transcript.read_text(encoding="utf-8").split("\n")
        if line and json.loads(line)["from"] == "agent"
    )
    assert answer["result"]["protocolVersion"] == version
