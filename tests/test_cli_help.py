"""What the CLI says about itself (item 8 of issue 34): `--version`, shell completion (with the
pinned target names), every command's help free of `<bool>` placeholders and with examples, and
the default package of an ad-hoc source documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from cli_support import ROOT, run_cli

from acp_codegen import __version__
from acp_codegen.cli_help import EXAMPLES

COMMANDS = [
    "",
    "generate",
    "init",
    "pull",
    "version",
    "diff",
    "check-transcript",
    "outdated",
    "upgrade",
    "migrate",
    "scaffold agent",
    "scaffold client",
    "scaffold proxy",
    "ci github",
    "probe agent",
    "probe client",
]


def test_version_flag_and_command() -> None:
    for args in (["--version"], ["version"]):
        done = run_cli(*args)
        assert done.returncode == 0 and done.stdout == f"{__version__}\n", done.describe()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c or "top")
def test_help_has_no_type_placeholders_and_shows_examples(command: str) -> None:
    done = run_cli(*command.split(), "--help")
    assert done.returncode == 0, done.describe()
    assert "<bool>" not in done.stdout and "<list[" not in done.stdout, done.stdout
    if command in EXAMPLES:
        assert "Examples" in done.stdout, done.stdout
        for line, _ in EXAMPLES[command]:
            assert line.split()[0] == "acp-codegen"
            assert line[:60] in " ".join(done.stdout.split()), line  # wrapped, but there


def test_the_default_package_is_documented() -> None:
    assert "(default: acp_schema)" in " ".join(run_cli("generate", "--help").stdout.split())


def _complete(*words: str) -> list[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "_ACP_CODEGEN_COMPLETE": "complete_bash",
        "COMP_WORDS": " ".join(("acp-codegen", *words)),
        "COMP_CWORD": str(len(words)),
    }
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shell_completion_of_commands_options_and_pinned_targets() -> None:
    assert _complete("gen") == ["generate"]
    assert "--stat" in _complete("generate", "--st")
    assert _complete("generate", "acp_v") == ["acp_v2_draft", "acp_v2", "acp_v1"]
    assert _complete("upgrade", "acp_v2_") == ["acp_v2_draft"]
    # typer finds the shell among the command's parent processes (shellingham), as in a terminal;
    # a bash parent makes that hold wherever the test runs (under xdist the parent is python)
    script = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m acp_codegen --show-completion; exit $?"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert script.returncode == 0 and re.search(
        r"complete .*acp-codegen", script.stdout
    ), script.stderr


def test_starting_the_cli_leaves_the_generator_stack_unimported() -> None:
    # every command starts by importing the CLI; only `generate`, `scaffold` and friends need the
    # IR, the templates and black, so they are imported inside those commands
    probe = (
        "import sys, acp_codegen.cli; "
        "print(sorted({m.split('.')[0] if not m.startswith('acp_codegen') else m.rsplit('.', 1)[0]"
        " for m in sys.modules if m.startswith(('acp_codegen.ir', 'acp_codegen.render', 'jinja2',"
        " 'black', 'pydantic'))}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]", done.stdout
