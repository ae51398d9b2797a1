"""The third-party peers' probe figures: running them (`measure`), their JSON
(`docs/peer-figures.json`) and the Markdown table of docs/conformance.md rendered from it.

`scripts/peer_figures.py` measures and writes both; tests/interop/test_peer_figures.py holds the
table equal to the JSON's rendering and every failure judged in `catalog.PEER_LIST`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.interop.peers.catalog import INTEROP, Peer, bin_dir_of, environment

ROOT = INTEROP.parents[1]
FIGURES = ROOT / "docs" / "peer-figures.json"
DOC = ROOT / "docs" / "conformance.md"
BEGIN, END = "<!-- peers:begin -->\n", "<!-- peers:end -->"
PROBE_OPTIONS = ["--timeout", "10", "--turn-timeout", "30", "--exit-timeout", "5"]


def measure(peer: Peer) -> dict[str, Any]:
    """Run the peer under its probe: its row of the figures (or why it did not run)."""
    from tests.interop.peer_envs import PeerUnavailable

    row: dict[str, Any] = {"peer": peer.name, "registry": peer.registry, "probe": peer.role}
    if peer.install[0] == "none":
        return {**row, "ran": False, "why": peer.install[1]}
    try:
        bin_dir = bin_dir_of(peer)
    except PeerUnavailable as exc:
        return {**row, "ran": False, "why": str(exc).splitlines()[0]}
    with tempfile.TemporaryDirectory(prefix="acp-peer-") as scratch:
        command = peer.command(bin_dir, Path(scratch))
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "acp_codegen",
                "probe",
                peer.role,
                "--format",
                "json",
                *PROBE_OPTIONS,
                "--",
                *command,
            ],
            cwd=scratch,
            env={**environment(peer, bin_dir), "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return {**row, "ran": False, "why": f"the probe printed no report (exit {done.returncode})"}
    counts = {
        status: sum(1 for r in report["rules"] if r["status"] == status)
        for status in ("pass", "fail", "not-exercised")
    }
    failed = sorted(r["rule"] for r in report["rules"] if r["status"] == "fail")
    return {
        **row,
        "ran": True,
        "schema": report["schema"],
        **counts,
        "failed": failed,
        "misses": [m["what"] for m in report["misses"]],
        "stable_only": len(report["stable_only"]),
        "exit": report["exit_status"],
    }


def render(figures: list[dict[str, Any]], judged: dict[tuple[str, str], dict[str, str]]) -> str:
    """The Markdown table (and the judgement of each failure) for docs/conformance.md."""
    rows = [
        "| peer | probe | schema | pass | fail | not exercised | missed | stable-only | exit |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    notes: list[str] = []
    for row in figures:
        if not row["ran"]:
            rows.append(f"| {row['peer']} | {row['probe']} | not run: {row['why']} | | | | | | |")
            continue
        missed = ", ".join(f"`{m}`" for m in row["misses"]) or "0"
        rows.append(
            f"| {row['peer']} | {row['probe']} | {row['schema']} | {row['pass']} | {row['fail']} | "
            f"{row['not-exercised']} | {missed} | {row['stable_only']} | {row['exit']} |"
        )
        for key in [*row["failed"], *(f"miss:{m}" for m in row["misses"])]:
            text = judged.get((row["peer"], row["probe"]), {}).get(key, "NOT JUDGED")
            notes.append(f"- {row['peer']} ({row['probe']}), `{key}`: {text}")
    return "\n".join(rows) + "\n\nEach failure, judged:\n\n" + "\n".join(notes) + "\n"


def judgements() -> dict[tuple[str, str], dict[str, str]]:
    """(peer, role) -> rule -> judgement, from the catalogue."""
    from tests.interop.peers.catalog import PEER_LIST

    return {(peer.name, peer.role): peer.judged for peer in PEER_LIST}


def with_table(doc: str, figures: list[dict[str, Any]]) -> str:
    """docs/conformance.md with the figures' table between its markers."""
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + render(figures, judgements()) + END + tail
