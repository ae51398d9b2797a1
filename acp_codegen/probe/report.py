"""The probes' report: every rule of the catalogue with pass, fail (with its findings) or not
exercised, what should have been exercised and was not (`misses`, with why), what only a stable
schema refuses (marked, not failed), and what the probe noticed on the way; text or JSON. Exit
status 1 on any failure or miss: a green report means the peer was tested.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from acp_codegen.transcript.catalog import CATALOG
from acp_codegen.transcript.conformance import Result
from acp_codegen.transcript.report import finding_text


@dataclass(frozen=True)
class ProbeOutcome:
    """What one probe run found: the conformance result and the probe's own notes."""

    kind: str  # "agent" or "client": the side under test
    command: tuple[str, ...]
    result: Result
    notes: tuple[str, ...]
    transcript: str | None
    misses: tuple[tuple[str, str], ...] | list[tuple[str, str]] = ()
    """(rule or step, why it should have been exercised) for what the run left untested."""

    @property
    def failed(self) -> int:
        """How many rules failed."""
        return sum(1 for rule in CATALOG if self.result.status(rule.id) == "fail")

    @property
    def exit_status(self) -> int:
        """1 when any rule failed or anything expected went unexercised, else 0."""
        return 1 if self.failed or self.misses else 0


def render_text(outcome: ProbeOutcome) -> str:
    """One line per rule (`pass` / `FAIL` / `-`), its findings indented below, notes and a
    summary."""
    lines = [
        f"probe {outcome.kind}: {' '.join(outcome.command)}",
        f"schema: {outcome.result.revision}",
    ]
    counts = {"pass": 0, "fail": 0, "not-exercised": 0}
    width = max(len(r.id) for r in CATALOG)
    for rule in CATALOG:
        status = outcome.result.status(rule.id)
        counts[status] += 1
        mark = {"pass": "pass", "fail": "FAIL", "not-exercised": "-   "}[status]
        lines.append(f"{mark}  {rule.id.ljust(width)}  {rule.source}")
        lines.extend(
            f"        line {f.line}: {finding_text(f)}"
            for f in outcome.result.findings
            if f.rule == rule.id
        )
    lines.extend(f"MISS  {what}: {why}" for what, why in outcome.misses)
    lines.extend(
        f"stable-only (not a failure), line {f.line}: {finding_text(f)}"
        for f in outcome.result.stable_only
    )
    lines.extend(f"note: {note}" for note in (*outcome.notes, *outcome.result.notes))
    if outcome.transcript:
        lines.append(f"transcript: {outcome.transcript}")
    lines.append(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['not-exercised']} not exercised"
        f"{f', {len(outcome.misses)} missed' if outcome.misses else ''}"
    )
    return "\n".join(lines) + "\n"


def render_json(outcome: ProbeOutcome) -> str:
    """`{"probe", "command", "schema", "rules": [{"rule", "status", "source", "binds", "findings"}],
    "notes", "failed"}`."""
    rules = [
        {
            **rule.to_dict(),
            "status": outcome.result.status(rule.id),
            "findings": [f.to_dict() for f in outcome.result.findings if f.rule == rule.id],
        }
        for rule in CATALOG
    ]
    payload = {
        "probe": outcome.kind,
        "command": list(outcome.command),
        "schema": outcome.result.revision,
        "rules": rules,
        "misses": [{"what": what, "why": why} for what, why in outcome.misses],
        "stable_only": [f.to_dict() for f in outcome.result.stable_only],
        "notes": [*outcome.notes, *outcome.result.notes],
        "transcript": outcome.transcript,
        "failed": outcome.failed,
        "exit_status": outcome.exit_status,
    }
    return json.dumps(payload, indent=2) + "\n"
