"""The whole conformance check of one transcript: the wire and schema rules (`wire`) and, for
revisions with the v2 prompt lifecycle, the lifecycle rules (`check`), over one stream of items.

Incremental (`Conformance.add` per item), so a probe can check while it records and a file is
checked while it is read: memory is the connection's state, not the transcript. The result says,
per rule, whether it was exercised, which is what the probes' pass / fail / not-exercised is made
of.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from acp_codegen.transcript.catalog import CATALOG
from acp_codegen.transcript.check import Checker
from acp_codegen.transcript.proxy import ProxyChecker
from acp_codegen.transcript.read import Entry, Item
from acp_codegen.transcript.rules import MESSAGE_UPDATES, Finding
from acp_codegen.transcript.schema import Revision, pinned_for_version, resolve_revision
from acp_codegen.transcript.wire import RevisionChoice, WireChecker

# lifecycle rule -> what must have been seen for it to be exercised: session/update tags, or methods
_LIFECYCLE_TRIGGERS: dict[str, frozenset[str]] = {
    "prompt-response-message-id": frozenset({"session/prompt"}),
    "prompt-message-id-reused": frozenset({"session/prompt"}),
    "user-message-id-mismatch": frozenset({"session/prompt"}),
    "user-message-missing": frozenset({"session/prompt"}),
    "message-id-missing": MESSAGE_UPDATES,
    "work-without-running": frozenset({"session/prompt"}),
    "idle-without-stop-reason": frozenset({"state_update"}),
    "update-after-cancelled-idle": frozenset({"session/cancel"}),
    "notice-empty-title": frozenset({"notice"}),
    "custom-stop-reason": frozenset({"state_update"}),
}
_COMPACTION = frozenset({"compaction_update", "compaction_summary_chunk"})


@dataclass(frozen=True)
class Result:
    """Findings (line order, one per line and rule and side), exercised rule IDs, and notes."""

    findings: tuple[Finding, ...]
    exercised: frozenset[str]
    notes: tuple[str, ...]
    revision: str
    stable_only: tuple[Finding, ...] = ()
    """What only the stable schema beside an unstable revision refuses: marked, not failed."""

    def status(self, rule: str) -> str:
        """`fail`, `pass` or `not-exercised` for one rule."""
        if any(f.rule == rule for f in self.findings):
            return "fail"
        return "pass" if rule in self.exercised else "not-exercised"


class Conformance:
    """Feed items in order with `add`, then `finish` for the `Result`."""

    def __init__(self, revision: Revision, *, fixed: bool = True) -> None:
        self.choice = RevisionChoice(revision, fixed, pinned_for_version)
        self.wire = WireChecker(self.choice)
        self.lifecycle = Checker()
        self.proxy = ProxyChecker(self.choice)
        self.seen: set[str] = set()

    def add(self, item: Item) -> None:
        """Take the next recorded item."""
        self.wire.add(item)
        if isinstance(item, Entry):
            self.proxy.add(item)
        if not isinstance(item, Entry) or not self.choice.current.has_prompt_lifecycle:
            return
        self.lifecycle.add(item)
        method = item.message.get("method")
        if isinstance(method, str):
            self.seen.add(method)
            update = _update(item.message.get("params"))
            if update is not None:
                self.seen.add(update)

    def finish(self) -> Result:
        """Run the end-of-transcript rules and return the result."""
        self.wire.finish()
        findings = {
            (f.line, f.rule, f.side, f.message): f
            for f in [*self.wire.findings, *self.proxy.findings, *self.lifecycle.finish()]
        }
        unique: dict[tuple[int, str, str | None], Finding] = {}
        for finding in sorted(findings.values()):
            unique.setdefault((finding.line, finding.rule, finding.side), finding)
        exercised = self.wire.exercised | self.proxy.exercised
        for rule, triggers in _LIFECYCLE_TRIGGERS.items():
            if self.seen & triggers:
                exercised.add(rule)
        if self.seen & _COMPACTION:
            exercised.update(
                r.id for r in CATALOG if r.id.startswith(("compaction-", "custom-compaction"))
            )
        stable_only = tuple(
            sorted({(f.line, f.pointer, f.message): f for f in self.wire.stable_only}.values())
        )
        return Result(
            tuple(sorted(unique.values())),
            frozenset(exercised),
            tuple(self.choice.notes),
            self.choice.current.label,
            stable_only,
        )

    def exercised(self, rule: str) -> None:
        """A rule the recording side judged itself and found kept."""
        self.wire.exercised.add(rule)

    def external(self, rule: str, side: str, line: int, message: str) -> None:
        """A finding the recording side judged itself (by time, or on another connection)."""
        self.wire.external(rule, side, line, message)


def _update(params: Any) -> str | None:
    update = params.get("update") if isinstance(params, dict) else None
    tag = update.get("sessionUpdate") if isinstance(update, dict) else None
    return tag if isinstance(tag, str) else None


def check_items(items: Iterable[Item], schema: str | None = None) -> Result:
    """Check a stream of items against `schema` (a source or pin; default: the default pin,
    switching to the pin of a negotiated older version)."""
    conformance = Conformance(resolve_revision(schema), fixed=schema is not None)
    for item in items:
        conformance.add(item)
    return conformance.finish()
