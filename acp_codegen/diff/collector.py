"""The change collector: what every comparison writes its findings into.

Owns turning (rule, path, message) into a `Change` with its `breaks` and `senders` worked out
from the definition the change was found in (looked up in both revisions), plus the shared
helpers for description-only and UNSTABLE-marker changes.
"""

from __future__ import annotations

import re

from acp_codegen.diff.facts import Facts
from acp_codegen.diff.model import SIDES, Change, breaks_for, sort_key
from acp_codegen.diff.renames import find_method_renames, find_renames, path_mapper
from acp_codegen.diff.rules import rule
from acp_codegen.diff.typecmp import TypeJudge

_UNSTABLE_PARAGRAPHS = re.compile(
    r"\*\*UNSTABLE\*\*\s*(This capability is not part of the spec yet[^\n]*(\n(?!\n)[^\n]*)*)?\s*"
)


def without_marker(description: str | None) -> str:
    """A description without the UNSTABLE marker paragraph(s), whitespace-trimmed."""
    return _UNSTABLE_PARAGRAPHS.sub("", description or "").strip()


class Collector:
    """Collects the changes between one old and one new revision."""

    def __init__(self, old: Facts, new: Facts) -> None:
        self.old = old
        self.new = new
        self.method_renames = find_method_renames(old, new)
        self.renames = find_renames(old, new, self.method_renames)
        self.rename = path_mapper(self.renames)
        self.unrename = path_mapper(
            {new_path: old_path for old_path, new_path in self.renames.items()}
        )
        self.judge = TypeJudge(old, new, self.rename)
        self.changes: list[Change] = []

    def senders(self, at: str) -> tuple[str, ...]:
        """Sides that send the definition at a (new) wire path, in either revision."""
        sent = self.old.senders_at(self.unrename(at)) | self.new.senders_at(at)
        return tuple(s for s in SIDES if s in sent)

    def emit(
        self,
        rule_id: str,
        path: str,
        message: str,
        *,
        at: str,
        old: str | None = None,
        new: str | None = None,
        breaks: tuple[str, ...] | None = None,
        senders: tuple[str, ...] | None = None,
    ) -> None:
        """Record one change found in the definition at wire path `at` (or with given senders)."""
        if senders is None:
            senders = self.senders(at)
        if breaks is None:
            breaks = breaks_for(rule(rule_id).role, senders)
        self.changes.append(Change(rule_id, path, message, breaks, senders, old, new))

    def docs(self, path: str, what: str, old: str | None, new: str | None, *, at: str) -> None:
        """Record a description-only change (ignoring the UNSTABLE marker)."""
        before, after = without_marker(old), without_marker(new)
        if before != after:
            verb = "added" if not before else "removed" if not after else "changed"
            self.emit(
                "DESCRIPTION_CHANGED",
                path,
                f"description of {what} {verb}",
                at=at,
                old=before or None,
                new=after or None,
            )

    def stability(self, path: str, what: str, old: bool, new: bool, *, at: str) -> None:
        """Record the UNSTABLE marker being removed or added."""
        if old and not new:
            self.emit(
                "UNSTABLE_MARK_REMOVED", path, f"{what} stabilised (UNSTABLE marker removed)", at=at
            )
        elif new and not old:
            self.emit("UNSTABLE_MARK_ADDED", path, f"{what} is now marked UNSTABLE", at=at)

    def sorted(self) -> tuple[Change, ...]:
        """The collected changes in listing order, without exact duplicates."""
        unique = {(c.rule, c.path, c.message, c.old, c.new): c for c in self.changes}
        return tuple(sorted(unique.values(), key=sort_key))
