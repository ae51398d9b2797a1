"""`acp-codegen outdated`: which pinned npm sources have newer releases, and whether the file
changed.

Owns checking one target: ask the registry for the releases after the pinned version, fetch the
newest one's file (`npm pack`, the tarball cached like every npm fetch), compare sha256s, and when
the file differs, diff the two revisions for the summary counts. Sources that are not npm
packages are listed as not checked, with the reason. Also renders the table and the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.diff.model import DiffResult, Revision
from acp_codegen.errors import CodegenError
from acp_codegen.ir.nodes import Protocol
from acp_codegen.load import load_document
from acp_codegen.pins import Pin
from acp_codegen.pipeline import build_ir, load
from acp_codegen.revisions import short_label
from acp_codegen.sources import Fetched, NpmSource, default_cache_dir, fetch, parse_source
from acp_codegen.upgrade.registry import Releases, npm_view

Status = Literal["current", "same-file", "outdated", "file-gone", "not-checked"]
_NOT_CHECKED = {
    "github": "github: source (a commit, not a release; nothing to compare with)",
    "url": "plain URL source (no release list to ask)",
    "path": "local path source (no release list to ask)",
}


@dataclass(frozen=True)
class Newer:
    """The newest release of a pinned npm source: its source spec and fetched file (None: it has
    none)."""

    version: str
    source: str
    fetched: Fetched | None


@dataclass(frozen=True)
class TargetStatus:
    """What `outdated` found for one target."""

    target: str
    source: str
    status: Status
    pinned: str | None = None
    newest: Newer | None = None
    diff: DiffResult | None = None
    reason: str | None = None

    @property
    def file_changed(self) -> bool | None:
        """Whether the newest release's file differs from the pinned one (None: not known)."""
        return None if self.newest is None else self.status in ("outdated", "file-gone")

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object (documented in docs/upgrade.md)."""
        return {
            "target": self.target,
            "status": self.status,
            "source": self.source,
            "pinned": self.pinned,
            "newest": None if self.newest is None else self.newest.version,
            "newest_source": None if self.newest is None else self.newest.source,
            "newest_sha256": (
                None
                if self.newest is None or self.newest.fetched is None
                else self.newest.fetched.sha256
            ),
            "file_changed": self.file_changed,
            "summary": None if self.diff is None else self.diff.summary(),
            "reason": self.reason,
        }


ReleaseLookup = Callable[[str], Releases]


def cached_lookup(lookup: ReleaseLookup = npm_view) -> ReleaseLookup:
    """A release lookup asking the registry once per package."""
    seen: dict[str, Releases] = {}

    def get(package: str) -> Releases:
        """The package's releases, asked for once."""
        if package not in seen:
            seen[package] = lookup(package)
        return seen[package]

    return get


def npm_source_at(spec: NpmSource, version: str) -> str:
    """The same file of the same package at another version."""
    return f"npm:{spec.package}@{version}#{spec.path}"


def fetch_release(source: str) -> Fetched:
    """Fetch (and cache) an unpinned source's file; its sha256 is what it is."""
    return fetch(
        parse_source(source), expected_sha256=None, cache_dir=default_cache_dir(), shared_dir=None
    )


def pinned_protocol(pin: Pin) -> Protocol:
    """The IR of a pin's current source (its sha256 verified)."""
    return build_ir(load(pin.source, pin.sha256))


def diff_files(
    pin: Pin, new_source: str, fetched: Fetched
) -> tuple[DiffResult, Protocol, Protocol]:
    """The diff from a pin's current file to a fetched one, with both IRs."""
    old_ir = pinned_protocol(pin)
    new_ir = build_ir(load_document(fetched))
    result = DiffResult(
        Revision(short_label(pin.source), pin.source, pin.sha256),
        Revision(short_label(new_source), new_source, fetched.sha256),
        diff_protocols(old_ir, new_ir),
    )
    return result, old_ir, new_ir


def check_target(pin: Pin, releases: ReleaseLookup, *, prereleases: bool = False) -> TargetStatus:
    """Check one target against the registry."""
    spec = parse_source(pin.source)
    if not isinstance(spec, NpmSource):
        return TargetStatus(pin.name, pin.source, "not-checked", reason=_NOT_CHECKED[spec.kind])
    newer = releases(spec.package).newer_than(spec.version, prereleases=prereleases)
    if not newer:
        return TargetStatus(pin.name, pin.source, "current", pinned=spec.version)
    source = npm_source_at(spec, newer[-1])
    try:
        fetched = fetch_release(source)
    except CodegenError as error:
        if not any(
            d.code == "fetch-failed" and f"has no file {spec.path}" in d.message
            for d in error.diagnostics
        ):
            raise
        reason = f"{newer[-1]} has no file {spec.path}: the schema moved"
        return TargetStatus(
            pin.name,
            pin.source,
            "file-gone",
            spec.version,
            Newer(newer[-1], source, None),
            reason=reason,
        )
    found = Newer(newer[-1], source, fetched)
    if fetched.sha256 == pin.sha256:
        return TargetStatus(pin.name, pin.source, "same-file", pinned=spec.version, newest=found)
    result, _, _ = diff_files(pin, source, fetched)
    return TargetStatus(
        pin.name, pin.source, "outdated", pinned=spec.version, newest=found, diff=result
    )


def check_targets(
    pins: Iterable[Pin], *, prereleases: bool = False, lookup: ReleaseLookup = npm_view
) -> list[TargetStatus]:
    """Check every target; every failure is collected into one CodegenError."""
    releases = cached_lookup(lookup)
    rows: list[TargetStatus] = []
    problems: list[CodegenError] = []
    for pin in pins:
        try:
            rows.append(check_target(pin, releases, prereleases=prereleases))
        except CodegenError as error:
            problems.append(error)
    if problems:
        raise CodegenError(*dict.fromkeys(d for e in problems for d in e.diagnostics))
    return rows


def any_outdated(rows: Sequence[TargetStatus]) -> bool:
    """Whether some target has a newer release with a different file (exit status 1)."""
    return any(row.status in ("outdated", "file-gone") for row in rows)


def _counts(row: TargetStatus) -> str:
    if row.diff is None:
        return row.reason or ""
    summary = row.diff.summary()
    return f"{summary['breaking']} breaking, {summary['warning']} warning, {summary['info']} info"


def render_table(rows: Sequence[TargetStatus]) -> str:
    """A plain-text table: target, pinned, newest, file changed, diff summary (or the reason)."""
    header = ("target", "pinned", "newest", "file changed", "diff")
    body = []
    for row in rows:
        newest = (
            "-"
            if row.status == "not-checked"
            else row.newest.version if row.newest else "(current)"
        )
        changed = {True: "yes", False: "no", None: "-"}[row.file_changed]
        pinned = row.pinned or short_label(row.source)
        body.append(
            (row.target, pinned, newest, changed, _counts(row) if row.status != "current" else "")
        )
    widths = [max(len(r[i]) for r in (header, *body)) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in (header, *body)
    ]
    return "\n".join(lines) + "\n"


def render_json(rows: Sequence[TargetStatus]) -> str:
    """`{"targets": [...]}` with one object per target."""
    return json.dumps({"targets": [row.to_json() for row in rows]}, indent=2) + "\n"
