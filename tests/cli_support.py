"""Test helpers shared by every test directory: project paths, running the CLI, file trees.

A plain module (on pytest's `pythonpath`), not conftest.py: `from cli_support import ...` resolves to
whichever conftest.py was imported last once several test directories have one.

The CLI is always run as a process of its own (`python -m acp_codegen ...`, forked from a warm one
that imported it already, see cli_fork.py) so that tests see what a user sees: exit status, stdout
and stderr, with stdout not a terminal.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_fork import run_acp_codegen

from acp_codegen.sources import project_root

ROOT = project_root()
GENERATED = ROOT / "generated"
# Directories that tools leave inside generated/ and that are never part of a package.
IGNORED_PARTS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


@dataclass(frozen=True)
class CliResult:
    """What one CLI run did."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together (for "no traceback anywhere" checks)."""
        return self.stdout + self.stderr

    def describe(self) -> str:
        """For assertion messages."""
        return f"`acp-codegen {' '.join(self.args)}` exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> CliResult:
    """Run `python -m acp_codegen ARGS` in a subprocess and capture its output."""
    merged = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    merged.pop("FORCE_COLOR", None)
    merged.update(env or {})
    argv = tuple(str(a) for a in args)
    status, out, err = run_acp_codegen(list(argv), cwd or ROOT, merged, timeout)
    return CliResult(argv, status, out, err)


def tree_bytes(directory: Path) -> dict[str, bytes]:
    """relative path -> bytes of every file under `directory` (tool caches left out)."""
    if not directory.is_dir():
        return {}
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not IGNORED_PARTS.intersection(p.relative_to(directory).parts)
    }


def tree_state(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Like `tree_bytes`, plus each file's mtime in ns (to see that nothing was rewritten)."""
    return {
        name: (data, (directory / name).stat().st_mtime_ns)
        for name, data in tree_bytes(directory).items()
    }


MINIMAL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Minimal ACP",
    "$defs": {
        "PingRequest": {
            "description": "Ask the agent whether it is alive.",
            "type": "object",
            "x-method": "ping",
            "x-side": "agent",
            "properties": {"bar": {"type": "string"}},
            "required": ["bar"],
        },
        "PingResponse": {
            "type": "object",
            "x-method": "ping",
            "x-side": "agent",
            "properties": {"ok": {"type": "boolean"}},
        },
    },
}


def write_json(path: Path, document: Any) -> Path:
    """Write a JSON document (pretty, stable) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def model_source(package: Path) -> str:
    """The text of every model module of a generated package (`_models/*.py`, in name order)."""
    return "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((package / "_models").glob("*.py"))
    )


PYTHON_BLOCK = re.compile(r"^```python(?: file=(\S+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(doc: Path) -> list[tuple[str | None, str]]:
    """A Markdown page's `python` blocks: (NAME of a `python file=NAME` block, else None; code)."""
    return [
        (m.group(1), m.group(2)) for m in PYTHON_BLOCK.finditer(doc.read_text(encoding="utf-8"))
    ]


def write_example(doc: Path, index: int, directory: Path) -> Path:
    """Write the page's `file=NAME` blocks into `directory` and its block `index` next to them as
    `example_<index>.py`; that script's path."""
    blocks = python_blocks(doc)
    for name, code in blocks:
        if name:
            (directory / name).write_text(code, encoding="utf-8")
    script = directory / f"example_{index}.py"
    script.write_text(blocks[index][1], encoding="utf-8")
    return script
