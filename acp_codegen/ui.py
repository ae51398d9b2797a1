"""Terminal output: progress, diagnostics, drift, one-line summaries (rich on a terminal).

Owns how results look, never what they are. On a non-terminal or with `--quiet`, only errors,
drift and the summary line are printed; progress (rich's, on stderr) only when stderr is a
terminal and not `--quiet`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from rich.console import Console

from acp_codegen.errors import Diagnostic
from acp_codegen.progress import terminal_progress

if TYPE_CHECKING:
    from acp_codegen.pipeline import TargetResult
    from acp_codegen.sources import Fetched
    from acp_codegen.write import Drift


class Reporter:
    """Prints what the CLI has to say."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)
        self.verbose = not quiet and sys.stdout.isatty()
        self.quiet = quiet

    def progress(self) -> AbstractContextManager[None]:
        """Show the library's steps during a block (stderr a terminal, not quiet)."""
        return terminal_progress(self.err, enabled=not self.quiet)

    def drift(self, drift: Drift, *, stat: bool = False) -> None:
        """One package's drift on stdout: its unified diff, or with `stat` its per-file counts; a
        package not generated at all is one line, not a diff of every file."""
        if drift.missing:
            self.out.print(
                f"{drift.package}: not generated yet ({len(drift.added)} file(s) to write)",
                markup=False,
            )
        else:
            sys.stdout.write(drift.stat() if stat else drift.diff)
            sys.stdout.flush()

    def diagnostics(self, items: Iterable[Diagnostic]) -> None:
        """Print each diagnostic on one line to stderr."""
        for d in items:
            self.err.print(d.render(), markup=False)

    def target_done(self, result: TargetResult) -> None:
        """Progress line for one generated target."""
        for warning in result.warnings:
            self.err.print(f"warning: {warning}", markup=False)
        if self.verbose:
            state = (
                "checked"
                if result.drift is not None
                else f"{result.written} written, {result.unchanged} unchanged"
            )
            self.out.print(
                f"[bold]{result.target.name}[/] -> {result.target.package}: {state} "
                f"({result.seconds:.2f}s)"
            )

    def fetched(self, item: Fetched) -> None:
        """Progress line for one pulled source."""
        if self.verbose:
            self.out.print(f"{item.source} [dim]({item.origin}, sha256 {item.sha256[:12]})[/]")

    def generate_summary(self, results: list[TargetResult], seconds: float, *, check: bool) -> None:
        """The closing one-line summary of `generate`."""
        if check:
            drifted = sum(1 for r in results if r.drift is not None and not r.drift.clean)
            self.summary(
                f"{len(results)} target(s) checked, {drifted} out of date ({seconds:.2f}s)"
            )
        else:
            written = sum(r.written for r in results)
            unchanged = sum(r.unchanged for r in results)
            self.summary(
                f"{len(results)} target(s): {written} file(s) written, {unchanged} unchanged "
                f"({seconds:.2f}s)"
            )

    def summary(self, text: str) -> None:
        """Print a summary line (always, also when quiet)."""
        self.out.print(text, markup=False)

    def note(self, text: str) -> None:
        """A hint on stderr."""
        self.err.print(text, markup=False)
