"""Helpers shared by the diff tests and `regen.py`: fixture and golden locations, running a diff.

Fixtures (`fixtures/<RULE_ID>/{old,new,expected}.json`) are tiny ACP-like schemas, one pair per
rule; goldens (`golden/<old>__<new>.{json,md}`) are diffs of real revisions from the shared
schema directory, with sources written as `<shared>/...` so they do not depend on the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.diff.model import DiffResult
from acp_codegen.diff.run import RevisionRef, diff_series
from acp_codegen.pipeline import ir_for
from acp_codegen.sources import project_root

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
SCHEMA_FILE = "schema.unstable.json"
# (old revision id, new revision id) in the shared directory; see golden/README.md.
GOLDEN_PAIRS = (
    ("git-9ac13511", "git-bb2ef8f7"),
    ("npm-2.2.0", "npm-2.4.0"),
    ("git-bb2ef8f7", "npm-1.8.0"),
)


def fixture_dirs() -> list[Path]:
    """Every rule fixture directory, sorted by rule ID."""
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def fixture_changes(directory: Path) -> list[dict[str, Any]]:
    """The JSON changes between a fixture's old.json and new.json."""
    old = ir_for(str(directory / "old.json"))
    new = ir_for(str(directory / "new.json"))
    return [change.to_json() for change in diff_protocols(old, new)]


def golden_name(old_id: str, new_id: str) -> str:
    """File stem of a golden pair."""
    return f"{old_id}__{new_id}"


def golden_result(shared: Path, old_id: str, new_id: str) -> DiffResult:
    """The diff of two shared revisions, labelled by revision id, sources as `<shared>/...`."""
    refs = [
        RevisionRef(f"{rev}/{SCHEMA_FILE}", str(shared / rev / SCHEMA_FILE))
        for rev in (old_id, new_id)
    ]
    (result,) = diff_series(refs)
    return replace(
        result,
        old=replace(result.old, source=f"<shared>/{old_id}/{SCHEMA_FILE}"),
        new=replace(result.new, source=f"<shared>/{new_id}/{SCHEMA_FILE}"),
    )


@dataclass(frozen=True)
class Run:
    """What one `acp-codegen` subprocess run did."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr

    def describe(self) -> str:
        """For assertion messages."""
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_cli(*args: str | os.PathLike[str]) -> Run:
    """Run `python -m acp_codegen ARGS` (stdout not a terminal, no colour) and capture the result."""
    env = {**os.environ, "PYTHONPATH": str(project_root()), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", *map(str, args)],
        cwd=project_root(),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def proxy_schema(init_response: dict[str, Any]) -> dict[str, Any]:
    """A tiny ACP-like schema where `proxy/initialize` answers with a wrapped InitializeResponse."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "proxy fixture",
        "$defs": {
            "ClientRequest": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "method": {"type": "string"},
                    "params": {
                        "anyOf": [
                            {"$ref": "#/$defs/InitializeRequest"},
                            {"$ref": "#/$defs/InitializeProxyRequest"},
                        ]
                    },
                },
                "required": ["id", "method"],
            },
            "InitializeRequest": {
                "type": "object",
                "x-method": "initialize",
                "x-side": "agent",
                "properties": {"v": {"type": "integer"}},
            },
            "InitializeResponse": {
                "type": "object",
                "x-method": "initialize",
                "x-side": "agent",
                **init_response,
            },
            "InitializeProxyRequest": {
                "x-method": "proxy/initialize",
                "x-side": "proxy",
                "allOf": [{"$ref": "#/$defs/InitializeRequest"}],
            },
            "InitializeProxyResponse": {
                "x-method": "proxy/initialize",
                "x-side": "proxy",
                "allOf": [{"$ref": "#/$defs/InitializeResponse"}],
            },
        },
    }
