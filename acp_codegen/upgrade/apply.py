"""`acp-codegen upgrade`: move one pinned target to a new release, regenerate it, report the change.

Owns the plan (which source `--to` means, fetching and verifying the new file, the pin edit, the
rendered package, the report) and carrying it out atomically: everything is fetched, rendered
and validated before anything is written; the pin file is then replaced in one rename and the
package swapped in whole, and if the package cannot be written the old pin file is put back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from acp_codegen.diff.model import DiffResult
from acp_codegen.diff.render import render_markdown
from acp_codegen.errors import CodegenError, fail
from acp_codegen.pins import Pin, PinnedSource, load_pins
from acp_codegen.pipeline import Target, package_dir, render_target
from acp_codegen.progress import step
from acp_codegen.revisions import SPEC_PREFIXES, is_path_like, short_label
from acp_codegen.sources import NpmSource, parse_source
from acp_codegen.upgrade.api_changes import ApiChanges, api_changes, render_section
from acp_codegen.upgrade.migrate_run import FileResult, listing_lines, migrate_files, python_files
from acp_codegen.upgrade.migrate_types import OldBindings
from acp_codegen.upgrade.outdated import ReleaseLookup, diff_files, fetch_release, npm_source_at
from acp_codegen.upgrade.pinedit import check_pins_text, edited_pins, pin_diff, write_text_atomic
from acp_codegen.upgrade.registry import npm_view
from acp_codegen.write import write_package

_VERSION = re.compile(r"v?\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?")


@dataclass(frozen=True)
class Plan:
    """What an upgrade will do (or, when `identical`, why it does nothing)."""

    pins_path: Path
    pin: Pin
    new: PinnedSource
    identical: bool
    pins_before: str
    pins_after: str
    diff: DiffResult | None = None
    api: ApiChanges | None = None
    files: dict[str, str] | None = None
    code: tuple[FileResult, ...] | None = None
    """What the user's code (the paths given) needs, as `migrate --check` finds it; None: not looked
    at."""

    @property
    def pin_edit(self) -> str:
        """The planned pin file edit as a unified diff."""
        return pin_diff(self.pins_before, self.pins_after, self.pins_path)

    def report(self) -> str:
        """The markdown report: the wire diff (old -> new), then the Python API changes."""
        if self.identical or self.diff is None or self.api is None:
            return f"# Upgrade `{self.pin.name}`\n\n{self.summary()}\n"
        old, new = short_label(self.pin.source), short_label(self.new.source)
        title = f"# Upgrade `{self.pin.name}`: `{old}` → `{new}`"
        wire = render_markdown([self.diff])
        return f"{title}\n\n{wire}\n{render_section(self.api)}{self._code_section()}"

    def _code_section(self) -> str:
        """`## Your code`: every use of a changed name, `file:line`, and the migrate command."""
        if self.code is None:
            return ""
        command = f"acp-codegen migrate PATH... --from '{self.pin.source}' --to {self.pin.name}"
        lines = listing_lines(self.code)
        if not lines:
            return "\n## Your code\n\nNothing in the code looked at uses what changed.\n"
        body = "\n".join(
            f"    {line}" if line and line != "needs a person:" else line for line in lines
        )
        return (
            "\n## Your code\n\nWhere the code looked at uses what changed (rewrites first, which "
            f"`{command}` makes):\n\n{body}\n"
        )

    def summary(self) -> str:
        """One line saying what the upgrade does."""
        if self.identical and self.new.source == self.pin.source:
            current = short_label(self.pin.source)
            return f"{self.pin.name}: already at the newest release ({current}); nothing to update"
        if self.identical:
            return (
                f"{self.pin.name}: {short_label(self.new.source)} has the same file as the pinned "
                f"{short_label(self.pin.source)} (sha256 {self.new.sha256[:12]}): nothing to update"
            )
        return f"{self.pin.name}: {short_label(self.pin.source)} -> {short_label(self.new.source)}"


def resolve_to(pin: Pin, to: str | None, lookup: ReleaseLookup = npm_view) -> str:
    """The source `--to` names: a source spec or path as is, a version of the pinned npm package, or
    the newest release. A bare word that is both a version and a file here is ambiguous."""
    if to is not None and (to.startswith(SPEC_PREFIXES) or is_path_like(to)):
        return to
    if to is not None and Path(to).is_file():
        spec = parse_source(pin.source)
        if _VERSION.fullmatch(to) and isinstance(spec, NpmSource):
            raise fail(
                "ambiguous-revision",
                f"{to!r} is both a version and a file here: write ./{to} for the "
                f"file or {npm_source_at(spec, to)} for the release",
                file=to,
            )
        return to
    spec = parse_source(pin.source)
    if not isinstance(spec, NpmSource):
        what = "a version" if to is not None else "the newest release"
        raise fail(
            "upgrade-usage",
            f"target {pin.name!r} is pinned to a {spec.kind} source, so {what} "
            "cannot be looked up: give --to SOURCE",
            file=pin.source,
        )
    if to is not None:
        return npm_source_at(spec, to)
    newer = lookup(spec.package).newer_than(spec.version)
    return npm_source_at(spec, newer[-1]) if newer else pin.source


def plan_upgrade(
    pins_path: Path,
    target: str,
    to: str | None,
    *,
    lookup: ReleaseLookup = npm_view,
    code: Sequence[Path] = (),
) -> Plan:
    """Fetch, verify, diff and render the upgrade of one target; write nothing. `code`: paths of
    the user's code whose uses of what changed the report lists (`file:line`)."""
    pins = load_pins(pins_path)
    pin = pins.get(target)
    if pin is None:
        known = ", ".join(p.name for p in pins.targets)
        raise fail(
            "unknown-target", f"no pinned target {target!r} (known: {known})", file=str(pins_path)
        )
    source = resolve_to(pin, to, lookup)
    text = pins_path.read_text(encoding="utf-8")
    fetched = fetch_release(source)
    new = PinnedSource(source, fetched.sha256)
    if fetched.sha256 == pin.sha256:
        return Plan(pins_path, pin, new, True, text, text)
    after = edited_pins(text, pins_path, pin.name, new)
    check_pins_text(after, pins_path)
    diff, old_ir, new_ir = diff_files(pin, source, fetched)
    files, _ = render_target(replace(Target.from_pin(pin), source=source, sha256=fetched.sha256))
    api = api_changes(old_ir, new_ir, diff.changes)
    uses = None
    if code:
        with step("looking for uses of what changed in your code"):
            uses = tuple(migrate_files(python_files(code), api, OldBindings(old_ir), check=True))
    return Plan(pins_path, pin, new, False, text, after, diff, api, files, uses)


def apply_plan(plan: Plan, out_dir: Path) -> None:
    """Write the pin file and the regenerated package; on failure both stay as they were."""
    if plan.identical or plan.files is None:
        return
    if plan.pins_path.read_text(encoding="utf-8") != plan.pins_before:
        raise fail(
            "pins-changed",
            "the pin file changed while the upgrade was prepared; nothing written",
            file=str(plan.pins_path),
        )
    try:
        write_text_atomic(plan.pins_path, plan.pins_after)
    except OSError as exc:
        raise fail(
            "write-failed",
            f"cannot write the pin file: {exc.strerror or exc}",
            file=str(plan.pins_path),
        ) from None
    try:
        write_package(plan.files, package_dir(out_dir, plan.pin.package))
    except CodegenError:
        write_text_atomic(plan.pins_path, plan.pins_before)
        raise
