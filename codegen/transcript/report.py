"""Rendering findings: text (one line per finding, then a summary) and JSON.

Also runs a check end to end for the CLI (`run`): file in, rendered output and exit status out
(0 clean, 1 findings); unreadable files raise `CodegenError` for the command to print.
"""

from __future__ import annotations

import json
from pathlib import Path

from codegen.transcript.check import check
from codegen.transcript.read import read_transcript
from codegen.transcript.rules import RULES, Finding


def render_text(findings: list[Finding], name: str) -> str:
    """`FILE:LINE: rule: message` per finding and a closing count."""
    lines = [f"{name}:{f.line}: {f.rule}: {f.message}" for f in findings]
    lines.append(f"{len(findings)} finding(s)" if findings else f"{name}: no findings")
    return "\n".join(lines) + "\n"


def render_json(findings: list[Finding], name: str) -> str:
    """`{"file": ..., "count": N, "findings": [{"line", "rule", "message", "session"?}, ...]}`."""
    payload = {"file": name, "count": len(findings), "findings": [f.to_dict() for f in findings]}
    return json.dumps(payload, indent=2) + "\n"


def render_rules(fmt: str) -> str:
    """The rule catalogue."""
    if fmt == "json":
        return json.dumps([{"rule": k, "requirement": v} for k, v in RULES.items()], indent=2) + "\n"
    width = max(map(len, RULES))
    return "".join(f"{k.ljust(width)}  {v}\n" for k, v in RULES.items())


def run(path: Path, fmt: str) -> tuple[str, int]:
    """Check one transcript file: (rendered output, exit status)."""
    findings = check(read_transcript(path))
    render = render_json if fmt == "json" else render_text
    return render(findings, str(path)), 1 if findings else 0
