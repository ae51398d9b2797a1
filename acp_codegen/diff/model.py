"""Diff results as values: one `Change` per finding, one `DiffResult` per pair of revisions.

Owns the JSON shape of a change and of a result (documented in docs/diff.md), the order
changes are listed in, and how a rule's role turns into the `breaks` list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from acp_codegen.diff.rules import CATEGORIES, LEVELS, Category, Level, Role, rule

SIDES = ("agent", "client", "proxy")
"""Every role a change can break, in listing order; a proxy is its own role."""
PEERS = ("agent", "client")
"""The two ends of a plain ACP connection (what protocol-level methods stand for)."""
# Who receives what a side sends: a proxy answers its predecessor (a conductor or editor acting
# as the proxy's client), so what a proxy sends reaches clients.
_OTHER = {"agent": ("client",), "client": ("agent",), "proxy": ("client",)}


def breaks_for(role: Role, senders: Iterable[str]) -> tuple[str, ...]:
    """The sides a change breaks, from a rule's role and the definition's senders."""
    sent = {s for s in senders if s in SIDES}
    received = {peer for s in sent for peer in _OTHER[s]}
    if role == "sender":
        hit = sent
    elif role == "receiver":
        hit = received
    elif role == "both":
        hit = sent | received
    else:
        hit = set()
    return tuple(s for s in SIDES if s in hit)


def callers(handler: str) -> tuple[str, ...]:
    """The sides that call a method handled by `handler` (agent and client for protocol methods)."""
    return _OTHER.get(handler, PEERS)


def handlers(side: str) -> tuple[str, ...]:
    """The roles that handle a method of an `x-side` (agent and client for protocol methods)."""
    return (side,) if side in SIDES else PEERS


def parties(side: str) -> tuple[str, ...]:
    """Handlers and callers of a method of an `x-side`, in listing order."""
    involved = set(handlers(side)) | set(callers(side))
    return tuple(s for s in SIDES if s in involved)


@dataclass(frozen=True)
class Change:
    """One finding: which rule, where, whom it breaks, and a one-line message."""

    rule: str
    path: str
    message: str
    breaks: tuple[str, ...] = ()
    senders: tuple[str, ...] = ()
    old: str | None = None
    new: str | None = None

    @property
    def level(self) -> Level:
        """The rule's level."""
        return rule(self.rule).level

    @property
    def category(self) -> Category:
        """The rule's category."""
        return rule(self.rule).category

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object (keys documented in docs/diff.md)."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "level": self.level,
            "category": self.category,
            "breaks": list(self.breaks),
            "path": self.path,
            "message": self.message,
            "senders": list(self.senders),
        }
        if self.old is not None:
            out["old"] = self.old
        if self.new is not None:
            out["new"] = self.new
        return out


def sort_key(change: Change) -> tuple[int, int, str, str]:
    """Order: level (breaking first), category, path, rule."""
    return (LEVELS.index(change.level), CATEGORIES.index(change.category), change.path, change.rule)


@dataclass(frozen=True)
class Revision:
    """One side of a diff: what the user named it, its resolved source and sha256."""

    label: str
    source: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        """The revision as a JSON object."""
        return {"label": self.label, "source": self.source, "sha256": self.sha256}


@dataclass(frozen=True)
class DiffResult:
    """Every change between two revisions, in `sort_key` order."""

    old: Revision
    new: Revision
    changes: tuple[Change, ...]

    def without_docs(self) -> DiffResult:
        """The same result without description-only changes."""
        return replace(self, changes=tuple(c for c in self.changes if c.category != "docs"))

    def count(self, level: Level) -> int:
        """How many changes have this level."""
        return sum(1 for c in self.changes if c.level == level)

    def summary(self) -> dict[str, int]:
        """Counts per level with description-only changes counted apart (`docs`)."""
        counts: dict[str, int] = {
            level: sum(1 for c in self.changes if c.level == level and c.category != "docs")
            for level in LEVELS
        }
        counts["docs"] = sum(1 for c in self.changes if c.category == "docs")
        return counts

    def to_json(self) -> dict[str, Any]:
        """The result as one JSON object with a `changes` list."""
        return {
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "summary": self.summary(),
            "changes": [c.to_json() for c in self.changes],
        }


def fails(results: Iterable[DiffResult], fail_on: str) -> bool:
    """Whether the results should make the command exit 1 under `--fail-on`."""
    levels = {
        "breaking": ("breaking",),
        "warning": ("breaking", "warning"),
        "any": LEVELS,
        "none": (),
    }[fail_on]
    return any(c.level in levels for r in results for c in r.changes)
