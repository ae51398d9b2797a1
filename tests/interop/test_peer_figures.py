"""docs/conformance.md's table of the third-party peers is the rendering of docs/peer-figures.json
(written by scripts/peer_figures.py), every peer of the catalogue has its row, and every failure
and every miss in it is judged in tests/interop/peers/catalog.py."""

from __future__ import annotations

import json

from tests.interop.peers.catalog import PEER_LIST
from tests.interop.peers.figures import DOC, FIGURES, judgements, with_table


def test_the_doc_table_is_the_rendering_of_the_figures() -> None:
    figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    doc = DOC.read_text(encoding="utf-8")
    assert (
        with_table(doc, figures) == doc
    ), "run `python scripts/peer_figures.py --render` (or `nox -s interop`)"


def test_every_peer_has_figures_under_its_probe_and_every_failure_is_judged() -> None:
    figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    assert [(row["peer"], row["probe"]) for row in figures] == [(p.name, p.role) for p in PEER_LIST]
    judged = judgements()
    for row in figures:
        if not row["ran"]:
            assert row["why"], row
            continue
        assert row["exit"] == (1 if row["failed"] or row["misses"] else 0), row
        for key in [*row["failed"], *(f"miss:{m}" for m in row["misses"])]:
            assert judged[(row["peer"], row["probe"])].get(
                key
            ), f"{row['peer']} ({row['probe']}): {key} is not judged"
    ran = {row["peer"] for row in figures if row["ran"]}
    assert len(ran) >= 6, ran  # all but the one that cannot run here (toad: Python 3.14)
