"""How the CLI's help reads: the examples under each command's `--help`, flags without a type,
and the shell completion of pinned target names.

Typer's rich help prints a `<bool>` type beside every flag (`--check <bool>`), which reads as if
the flag took a value; `show_flags_plainly` drops it (Typer's plain help never shows it either).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.markup import escape

# command path -> (command line, what it does); shown under "Examples" in the command's --help.
# An older release of the draft, the OLD of the examples that compare or migrate.
_OLD_DRAFT = "npm:@agentclientprotocol/sdk@2.2.0#schema/v2/schema.unstable.json"

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("acp-codegen init", "start tracking the ACP schema in your project"),
        ("acp-codegen generate --check", "are the bindings up to date?"),
        ("acp-codegen outdated", "newer schema releases?"),
        ("acp-codegen scaffold agent my-agent", "a new agent project"),
        ("acp-codegen COMMAND --help", "each command's options and examples"),
    ),
    "generate": (
        ("acp-codegen generate", "every pinned target into the output directory"),
        ("acp-codegen generate acp_v2_draft", "one pinned target"),
        (
            "acp-codegen generate --check --stat",
            "write nothing; which files are out of date (exit 1 if any)",
        ),
        (
            "acp-codegen generate --schema ./schema.json --out /tmp/out",
            "an ad-hoc source, into package acp_schema",
        ),
    ),
    "init": (
        ("acp-codegen init", "track the default ACP draft schema in this project"),
        ("acp-codegen init acp_v1", "track the pinned v1 schema this toolkit ships"),
        (
            (
                "acp-codegen init npm:@agentclientprotocol/sdk@2.4.0#schema/v2/schema.json "
                "--package my_acp"
            ),
            "any source",
        ),
    ),
    "pull": (
        ("acp-codegen pull --history", "fetch every pinned source and its history into the cache"),
    ),
    "diff": (
        (
            f"acp-codegen diff {_OLD_DRAFT} acp_v2_draft",
            "OLD then NEW",
        ),
        (
            "acp-codegen diff --history acp_v2_draft --format markdown",
            "every step of a target's history",
        ),
        ("acp-codegen diff ./old.json ./new.json --fail-on warning", "exit 1 on warnings too"),
    ),
    "check-transcript": (
        ("acp-codegen check-transcript session.jsonl", "every rule the recording breaks"),
    ),
    "outdated": (
        ("acp-codegen outdated --format json", "newer releases of every pinned npm source"),
    ),
    "upgrade": (
        (
            "acp-codegen upgrade acp_v2_draft --dry-run",
            "the planned pin edit and report; writes nothing",
        ),
        ("acp-codegen upgrade acp_v2_draft --to 2.4.0 --report upgrade.md", "a given release"),
    ),
    "migrate": (
        (
            f"acp-codegen migrate src/ --from {_OLD_DRAFT} --to acp_v2_draft --check",
            "what your code needs",
        ),
    ),
    "scaffold agent": (
        ("acp-codegen scaffold agent my-agent", "an echo agent for ACP v1 and v2 clients"),
    ),
    "scaffold client": (("acp-codegen scaffold client my-client", "a terminal client"),),
    "scaffold proxy": (
        ("acp-codegen scaffold proxy my-proxy", "a context-injecting proxy for acp-conductor"),
    ),
    "ci github": (
        (
            "acp-codegen ci github",
            "the workflow, installing this toolkit the way it was installed here",
        ),
        (
            "acp-codegen ci github --install-from git+https://github.com/me/acp-codegen@v0.2.0",
            "from a git URL",
        ),
    ),
    "probe agent": (
        ("acp-codegen probe agent -- my-agent", "drive an agent as a demanding client"),
    ),
    "probe client": (
        (
            "acp-codegen probe client -- my-client --yes hi -- {agent}",
            "play the agent a client runs",
        ),
    ),
    "probe proxy": (
        (
            "acp-codegen probe proxy -- python my_proxy.py",
            "be a proxy's conductor, client and successor",
        ),
    ),
}


def epilog(command: str) -> str:
    """The "Examples" text of a command's help (rich markup; empty when it has none)."""
    examples = EXAMPLES.get(command, ())
    if not examples:
        return ""
    lines = [f"{escape(line)}  [dim]# {escape(what)}[/]" for line, what in examples]
    return "[bold]Examples[/]\n\n" + "\n\n".join(lines)


def show_flags_plainly() -> None:
    """Make rich help show no type for flags (Typer prints `<bool>` there), nor for arguments
    that name their values (`TARGET`, not `TARGET <list[str]>`)."""
    from typer.core import TyperArgument, TyperOption

    argument_type: Callable[[TyperArgument, Any], str | None] = TyperArgument.display_type_rich

    def argument_display_type_rich(self: TyperArgument, ctx: Any) -> str | None:
        """The argument's type as rich help shows it; nothing when it has a metavar."""
        return None if self.metavar is not None else argument_type(self, ctx)

    shown: Callable[[TyperOption, Any], str | None] = TyperOption.display_type_rich
    if getattr(shown, "_flags_plain", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        """The option's type as rich help shows it; nothing for a flag."""
        if self.is_flag and self.metavar is None:
            return None
        return shown(self, ctx)

    display_type_rich._flags_plain = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_display_type_rich  # type: ignore[method-assign,assignment]


def complete_targets(incomplete: str) -> list[str]:
    """The pinned target names starting with `incomplete` (shell completion; nothing on any
    error)."""
    from acp_codegen.errors import CodegenError
    from acp_codegen.pins import default_pin_path, load_pins

    try:
        names = [pin.name for pin in load_pins(default_pin_path())]
    except CodegenError:
        return []
    return [name for name in names if name.startswith(incomplete)]


# The TARGET argument of the commands that work on pinned targets (`generate`, `outdated`).
TargetsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="TARGET",
        help="Pinned target names (default: all).",
        autocompletion=complete_targets,
        show_default=False,
    ),
]
