"""Progress of the steps that can take over a second: fetches, registry calls, renders, loads.

The library marks such a step with `with step("fetching ..."):` wherever it happens, and says
nothing by default (a library stays silent). Whoever wants to see them installs a sink for a
block with `reporting(sink)`; the CLI installs `TerminalProgress` (rich's progress display on
stderr, erased when done) when stderr is a terminal and `-q` is not given. The sink lives in a
context variable, so nested calls need no parameter threaded through them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


class ProgressSink(Protocol):
    """Receives the steps as they begin and end (nested steps nest)."""

    def begin(self, label: str) -> object:
        """A step starts; the returned token is given back to `end`."""

    def end(self, token: object) -> None:
        """The step of `token` is over (done or failed)."""


_SINK: ContextVar[ProgressSink | None] = ContextVar("acp_codegen_progress", default=None)


@contextmanager
def step(label: str) -> Iterator[None]:
    """Mark a block as one step, shown as `label` while it runs (when anyone listens)."""
    sink = _SINK.get()
    if sink is None:
        yield
        return
    token = sink.begin(label)
    try:
        yield
    finally:
        sink.end(token)


@contextmanager
def reporting(sink: ProgressSink | None) -> Iterator[None]:
    """Send the steps of the block to `sink` (None: to nobody)."""
    reset = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(reset)


class TerminalProgress:
    """Rich's progress display: a spinner, the step and its elapsed time per running step;
    transient, so a finished command leaves only its own output. Use as a context manager."""

    def __init__(self, console: Console) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress: Progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )

    def __enter__(self) -> Self:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def begin(self, label: str) -> object:
        """Show the step."""
        return self.progress.add_task(label, total=None)

    def end(self, token: object) -> None:
        """Remove the step from the display."""
        from rich.progress import TaskID

        if isinstance(token, int):
            self.progress.remove_task(TaskID(token))


@contextmanager
def terminal_progress(console: Console, *, enabled: bool) -> Iterator[None]:
    """Show the steps of the block on `console` when `enabled` and the console is a terminal."""
    if not enabled or not console.is_terminal:
        yield
        return
    with TerminalProgress(console) as display, reporting(display):
        yield
