"""Running diffs: loading the revisions named on the command line, diffing pairs and series.

Owns the series over a pinned target's `history` and loading every revision once; what a
revision argument means is `acp_codegen.revisions`' (re-exported here). Every failure is a
`CodegenError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.diff.model import DiffResult, Revision
from acp_codegen.errors import CodegenError, fail
from acp_codegen.ir.nodes import Protocol
from acp_codegen.pipeline import build_ir, load
from acp_codegen.progress import step
from acp_codegen.revisions import Resolver, RevisionRef, short_label

__all__ = ["Resolver", "RevisionRef", "diff_series", "load_revision", "run_diff", "short_label"]


def load_revision(ref: RevisionRef) -> tuple[Revision, Protocol]:
    """Load one revision's IR (the same stages and diagnostics as `generate`)."""
    with step(f"loading {ref.label}"):
        protocol = build_ir(load(ref.source, ref.sha256))
    return Revision(ref.label, ref.source, protocol.sha256), protocol


def diff_series(refs: Sequence[RevisionRef]) -> list[DiffResult]:
    """The changes between each consecutive pair of revisions (each loaded once)."""
    if len(refs) < 2:
        raise fail("diff-usage", f"need at least two revisions to compare, got {len(refs)}")
    loaded: list[tuple[Revision, Protocol]] = []
    problems: list[CodegenError] = []
    for ref in refs:
        try:
            loaded.append(load_revision(ref))
        except CodegenError as error:
            problems.append(error)
    if problems:
        raise CodegenError(*(d for error in problems for d in error.diagnostics))
    return [
        DiffResult(old_rev, new_rev, diff_protocols(old_ir, new_ir))
        for (old_rev, old_ir), (new_rev, new_ir) in pairwise(loaded)
    ]


def run_diff(
    args: Sequence[str], *, series: bool, history: str | None, pins_path: Path
) -> list[DiffResult]:
    """What `acp-codegen diff` compares: OLD NEW, a --series of revisions, or a --history."""
    resolver = Resolver(pins_path)
    if history is not None:
        if args:
            raise fail("diff-usage", "--history takes no OLD/NEW arguments")
        return diff_series(resolver.history(history))
    if not series and len(args) != 2:
        raise fail(
            "diff-usage",
            f"expected OLD and NEW, got {len(args)} argument(s) (use --series for more)",
        )
    return diff_series([resolver.resolve(arg) for arg in args])
