"""Output formats of `acp-codegen diff`: text (rich), markdown, json and GitHub annotations.

Owns how results look, never what they are. Every format lists changes grouped by level
(breaking, warning, info) with description-only changes last; json is documented in
docs/diff.md. `render_rules` lists the rule table in the same formats.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from acp_codegen.diff.model import Change, DiffResult
from acp_codegen.diff.rules import LEVELS, RULES

FORMATS = ("text", "markdown", "json", "github")
_STYLE = {"breaking": "bold red", "warning": "yellow", "info": "cyan", "docs": "dim"}
_TITLE = {"breaking": "Breaking", "warning": "Warnings", "info": "Info", "docs": "Documentation"}
_ANNOTATION = {"breaking": "error", "warning": "warning", "info": "notice"}


def _groups(result: DiffResult) -> list[tuple[str, list[Change]]]:
    """(group, changes) for each non-empty group: the three levels, then docs."""
    groups: list[tuple[str, list[Change]]] = [
        (level, [c for c in result.changes if c.level == level and c.category != "docs"])
        for level in LEVELS
    ]
    groups.append(("docs", [c for c in result.changes if c.category == "docs"]))
    return [(name, changes) for name, changes in groups if changes]


def summary_line(result: DiffResult) -> str:
    """`2 breaking, 1 warning, 5 info, 3 docs` (docs counted apart from info)."""
    return ", ".join(f"{count} {name}" for name, count in result.summary().items())


def _breaks(change: Change) -> str:
    return "breaks " + " + ".join(change.breaks) if change.breaks else "breaks nobody"


# -- text -------------------------------------------------------------------------------------
def render_text(results: Sequence[DiffResult], console: Console) -> None:
    """Print results for a terminal, grouped by level."""
    for index, result in enumerate(results):
        if index:
            console.print()
        console.print(
            f"[bold]{escape(result.old.label)}[/] -> [bold]{escape(result.new.label)}[/]: "
            f"{summary_line(result)}"
        )
        if not result.changes:
            console.print("  no changes")
        for group, changes in _groups(result):
            console.print(f"[{_STYLE[group]}]{_TITLE[group]} ({len(changes)})[/]")
            for c in changes:
                who = "" if group == "docs" else f"  [dim]({_breaks(c)})[/]"
                console.print(
                    f"  [{_STYLE[group]}]{c.rule}[/] [bold]{escape(c.path)}[/]: "
                    f"{escape(c.message)}{who}"
                )


# -- markdown ---------------------------------------------------------------------------------
def render_markdown(results: Sequence[DiffResult]) -> str:
    """Results as Markdown for a pull request or a changelog."""
    lines: list[str] = []
    for result in results:
        lines += [
            f"## `{result.old.label}` → `{result.new.label}`",
            "",
            summary_line(result) + ".",
            "",
        ]
        if not result.changes:
            lines += ["No changes.", ""]
        for group, changes in _groups(result):
            if group == "docs":
                lines += [
                    "<details><summary>Documentation (" + str(len(changes)) + ")</summary>",
                    "",
                ]
            else:
                lines += [f"### {_TITLE[group]} ({len(changes)})", ""]
            for c in changes:
                who = "" if group == "docs" else f" — {_breaks(c)}"
                lines.append(f"- `{c.rule}` `{c.path}`: {_md(c.message)}{who}")
            lines += ["", "</details>", ""] if group == "docs" else [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(text: str) -> str:
    """Escape Markdown outside the message's code spans (`...`), which are kept as they are."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = "".join("\\" + ch if ch in "\\*_[]<>#|" else ch for ch in parts[i])
    return "`".join(parts)


# -- json -------------------------------------------------------------------------------------
def render_json(results: Sequence[DiffResult]) -> str:
    """One JSON object: the result itself, or `{"series": [...]}` for several pairs."""
    if len(results) == 1:
        payload: object = results[0].to_json()
    else:
        payload = {"series": [r.to_json() for r in results]}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


# -- github -----------------------------------------------------------------------------------
def render_github(results: Sequence[DiffResult]) -> str:
    """GitHub Actions workflow commands: `::error title=RULE::path: message`."""
    lines: list[str] = []
    for result in results:
        pair = f"{result.old.label} -> {result.new.label}"
        for c in result.changes:
            kind = "notice" if c.category == "docs" else _ANNOTATION[c.level]
            title = _property(f"{c.rule} ({_breaks(c)})")
            lines.append(f"::{kind} title={title}::{_data(f'{c.path}: {c.message} [{pair}]')}")
        lines.append(_data(f"{pair}: {summary_line(result)}"))
    return "\n".join(lines) + "\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# -- the rule table ---------------------------------------------------------------------------
def render_rules(fmt: str, console: Console) -> str | None:
    """The rule table in a format (text prints to the console and returns None)."""
    if fmt == "json":
        rows = [
            {
                "id": r.id,
                "category": r.category,
                "level": r.level,
                "breaks": r.role,
                "purpose": r.purpose,
            }
            for r in RULES
        ]
        return json.dumps({"rules": rows}, indent=2) + "\n"
    if fmt == "markdown":
        lines = ["| ID | Category | Level | Breaks | Purpose |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| `{r.id}` | {r.category} | {r.level} | {r.role} | {r.purpose.replace('|', '/')} |"
            for r in RULES
        ]
        return "\n".join(lines) + "\n"
    table = Table("ID", "Category", "Level", "Breaks", "Purpose", box=None, pad_edge=False)
    for r in RULES:
        table.add_row(
            r.id, r.category, f"[{_STYLE[r.level]}]{r.level}[/]", r.role, escape(r.purpose)
        )
    console.print(table)
    return None
