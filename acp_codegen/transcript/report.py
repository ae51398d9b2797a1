"""Rendering findings (text: one line per finding, then notes and a summary; JSON) and the rule
catalogue (text, JSON, and the Markdown table of docs/conformance.md).

Also runs a check end to end for the CLI (`run`): file in, rendered output and exit status out
(0 clean, 1 findings); unreadable files raise `CodegenError` for the command to print.
"""

from __future__ import annotations

import json
from pathlib import Path

from acp_codegen.transcript.catalog import CATALOG
from acp_codegen.transcript.conformance import Result, check_items
from acp_codegen.transcript.read import read_transcript
from acp_codegen.transcript.rules import Finding


def finding_text(f: Finding) -> str:
    """`rule: [side] message (at pointer)`: one finding without its location."""
    side = f"[{f.side}] " if f.side else ""
    where = f" (at {f.pointer})" if f.pointer else ""
    return f"{f.rule}: {side}{f.message}{where}"


def render_text(result: Result, name: str) -> str:
    """`FILE:LINE: rule: [side] message (at pointer)` per finding, the notes, and a closing
    count."""
    lines = [f"{name}:{f.line}: {finding_text(f)}" for f in result.findings]
    lines.extend(
        f"{name}:{f.line}: stable-only (not a failure): {finding_text(f)}"
        for f in result.stable_only
    )
    lines.extend(f"{name}: note: {note}" for note in result.notes)
    lines.append(
        f"{len(result.findings)} finding(s)" if result.findings else f"{name}: no findings"
    )
    return "\n".join(lines) + "\n"


def render_json(result: Result, name: str) -> str:
    """`{"file", "schema", "count", "findings": [{"line", "rule", "message", "side", "pointer"?,
    "session"?}], "notes"}`."""
    payload = {
        "file": name,
        "schema": result.revision,
        "count": len(result.findings),
        "findings": [f.to_dict() for f in result.findings],
        "notes": list(result.notes),
        "stable_only": [f.to_dict() for f in result.stable_only],
    }
    return json.dumps(payload, indent=2) + "\n"


def render_rules(fmt: str) -> str:
    """The rule catalogue."""
    if fmt == "json":
        return json.dumps([r.to_dict() for r in CATALOG], indent=2) + "\n"
    width = max(len(r.id) for r in CATALOG)
    return "".join(
        f"{r.id.ljust(width)}  {r.binds:<8}  {r.source}: {r.requirement}\n" for r in CATALOG
    )


def rules_markdown() -> str:
    """The rules table of docs/conformance.md."""
    rows = ["| rule | binds | source | requirement |", "| --- | --- | --- | --- |"]
    bar = "\\|"
    rows.extend(
        f"| `{r.id}` | {r.binds} | {r.source} | {r.requirement.replace('|', bar)} |"
        for r in CATALOG
    )
    return "\n".join(rows) + "\n"


DOC_BEGIN, DOC_END = "<!-- rules:begin -->\n", "<!-- rules:end -->"


def with_rules_table(doc: str) -> str:
    """`doc` (docs/conformance.md) with the generated rules table between its markers."""
    head, rest = doc.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    return head + DOC_BEGIN + rules_markdown() + DOC_END + tail


def run(path: Path, fmt: str, schema: str | None = None) -> tuple[str, int]:
    """Check one transcript file: (rendered output, exit status)."""
    result = check_items(read_transcript(path), schema)
    render = render_json if fmt == "json" else render_text
    return render(result, str(path)), 1 if result.findings else 0
