"""Running diffs: naming revisions on the command line, loading them, diffing pairs and series.

Owns what a revision argument means (a source spec, a local path, or a pinned target name whose
source and sha256 come from the pin file), the series over a pinned target's `history`, and
loading every revision once. Every failure is a `CodegenError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.diff.model import DiffResult, Revision
from acp_codegen.errors import CodegenError, fail
from acp_codegen.ir.nodes import Protocol
from acp_codegen.pins import PinFile, load_pins
from acp_codegen.pipeline import build_ir, load

_SPEC_PREFIXES = ("npm:", "github:", "http://", "https://")
_COMMIT = re.compile(r"@([0-9a-f]{12,40})#")


@dataclass(frozen=True)
class RevisionRef:
    """A revision to load: how the user named it, its source spec and expected sha256."""

    label: str
    source: str
    sha256: str | None = None


def short_label(source: str) -> str:
    """A readable name for a source spec: the path inside a package dropped, commits shortened."""
    if source.startswith(("npm:", "github:")):
        return _COMMIT.sub(lambda m: "@" + m.group(1)[:8] + "#", source).split("#", 1)[0]
    return source


class Resolver:
    """Turns revision arguments into `RevisionRef`s, reading the pin file only when needed."""

    def __init__(self, pins_path: Path) -> None:
        self.pins_path = pins_path
        self._pins: PinFile | None = None

    def pins(self) -> PinFile:
        """The pin file (loaded once)."""
        if self._pins is None:
            self._pins = load_pins(self.pins_path)
        return self._pins

    def resolve(self, arg: str) -> RevisionRef:
        """A source spec or existing path as is; otherwise a pinned target name."""
        if arg.startswith(_SPEC_PREFIXES) or Path(arg).exists() or "/" in arg or arg.endswith(".json"):
            return RevisionRef(arg, arg)
        pin = self.pins().get(arg)
        if pin is None:
            known = ", ".join(p.name for p in self.pins().targets)
            raise fail("unknown-target", f"{arg!r} is neither a file, a source spec nor a pinned target (known: {known})", file=str(self.pins_path))
        return RevisionRef(arg, pin.source, pin.sha256)

    def history(self, target: str) -> list[RevisionRef]:
        """A pinned target's history (oldest first) followed by its current source."""
        pin = self.pins().get(target)
        if pin is None:
            known = ", ".join(p.name for p in self.pins().targets)
            raise fail("unknown-target", f"no pinned target {target!r} (known: {known})", file=str(self.pins_path))
        refs = [RevisionRef(short_label(h.source), h.source, h.sha256) for h in pin.history]
        return refs + [RevisionRef(f"{target} ({short_label(pin.source)})", pin.source, pin.sha256)]


def load_revision(ref: RevisionRef) -> tuple[Revision, Protocol]:
    """Load one revision's IR (the same stages and diagnostics as `generate`)."""
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


def run_diff(args: Sequence[str], *, series: bool, history: str | None, pins_path: Path) -> list[DiffResult]:
    """What `acp-codegen diff` compares: OLD NEW, a --series of revisions, or a --history."""
    resolver = Resolver(pins_path)
    if history is not None:
        if args:
            raise fail("diff-usage", "--history takes no OLD/NEW arguments")
        return diff_series(resolver.history(history))
    if not series and len(args) != 2:
        raise fail("diff-usage", f"expected OLD and NEW, got {len(args)} argument(s) (use --series for more)")
    return diff_series([resolver.resolve(arg) for arg in args])
