"""Rewrite the rules table of docs/conformance.md from the rule catalogue (run by `nox -s regen`)."""

from __future__ import annotations

from pathlib import Path

from acp_codegen.transcript.report import with_rules_table

DOC = Path(__file__).resolve().parent.parent / "docs" / "conformance.md"

if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    updated = with_rules_table(text)
    if updated != text:
        tmp = DOC.with_suffix(".md.tmp")
        tmp.write_text(updated, encoding="utf-8")
        tmp.replace(DOC)
