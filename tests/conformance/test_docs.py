"""docs/conformance.md's rules table is the one generated from the rule catalogue, and every
rule names a spec page that exists (or the schema)."""

from __future__ import annotations

import pytest

from acp_codegen.sources import project_root
from acp_codegen.transcript.catalog import CATALOG
from acp_codegen.transcript.report import rules_markdown, with_rules_table

ROOT = project_root()


def test_the_doc_table_equals_the_generated_one() -> None:
    doc = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert with_rules_table(doc) == doc, "run `nox -s regen` (scripts/regen_conformance_doc.py)"
    assert rules_markdown() in doc


def test_every_rule_cites_an_existing_page_and_section() -> None:
    spec = ROOT.parent / "shared" / "spec"
    if not spec.is_dir():
        pytest.skip(f"the spec pages {spec} are absent")
    for rule in CATALOG:
        page = rule.page.split(" ", 1)[0]
        if page == "schema":
            continue
        texts = [
            p.read_text(encoding="utf-8")
            for p in (spec / page, spec / "v2-draft" / page, spec / "v1" / page)
            if p.is_file()
        ]
        assert texts, f"{rule.id}: no page {page}"
        assert (
            any(rule.section.split(" (")[0] in t for t in texts) or page == "error.md"
        ), f"{rule.id}: {rule.section} not in {page}"
