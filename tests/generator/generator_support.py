"""Generator test support: hostile schemas built in code, the CLI run as a user runs it, and the
generated package imported in a fresh interpreter.

It has its own CLI runner (generation into a scratch package, then a fresh interpreter); the
minimal schema comes from cli_support.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_fork import run_acp_codegen
from cli_support import MINIMAL_SCHEMA

from acp_codegen.sources import default_shared_dir, project_root

ROOT = project_root()
DRAFT = default_shared_dir() / "npm-2.4.0" / "schema.unstable.json"
PACKAGE = "hostile"
Schema = dict[str, Any]


_MINIMAL: Schema = MINIMAL_SCHEMA


def minimal() -> Schema:
    """A fresh copy of a small valid ACP-like schema (one request, one response)."""
    return copy.deepcopy(_MINIMAL)


def draft() -> Schema:
    """The pinned draft, parsed (a fresh copy each call)."""
    loaded: Schema = json.loads(DRAFT.read_text(encoding="utf-8"))
    return loaded


def ping(schema: Schema) -> Schema:
    """The request definition of `minimal()`, to hang hostile properties on."""
    props: Schema = schema["$defs"]["PingRequest"]
    return props


@dataclass(frozen=True)
class Run:
    """What one subprocess did."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """For assertion messages."""
        return f"`{' '.join(self.args)}` exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("FORCE_COLOR", None)
    return env


def cli(*args: str | os.PathLike[str], cwd: Path) -> Run:
    """Run `acp-codegen ARGS` (as `python -m acp_codegen`) and capture the result."""
    argv = tuple(map(str, args))
    status, out, err = run_acp_codegen(list(argv), cwd, _env(), 600)
    return Run(argv, status, out, err)


def write_schema(tmp_path: Path, schema: Schema | str, name: str = "hostile.json") -> Path:
    """Write a schema (a document, or JSON text as it is) into `tmp_path`."""
    path = tmp_path / name
    path.write_text(
        schema if isinstance(schema, str) else json.dumps(schema, indent=1), encoding="utf-8"
    )
    return path


def generate(tmp_path: Path, schema: Schema | str, package: str = PACKAGE) -> tuple[Run, Path]:
    """`acp-codegen generate --schema FILE --package PACKAGE --out OUT`; returns (run, OUT)."""
    source = write_schema(tmp_path, schema)
    out = tmp_path / "out"
    return (
        cli("generate", "--schema", source.name, "--package", package, "--out", out, cwd=tmp_path),
        out,
    )


def assert_one_error(run: Run, code: str, *needles: str, out: Path | None = None) -> str:
    """Exit 2, no traceback, one `error[code] ...` line on stderr naming the needles; nothing in `out`."""
    assert run.returncode == 2, run.describe()
    assert "Traceback" not in run.stdout + run.stderr and "╭" not in run.stderr, run.describe()
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.describe()
    assert lines[0].startswith(f"error[{code}] "), run.describe()
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    if out is not None:
        assert not out.exists() or not any(out.iterdir()), f"something was written to {out}"
    return lines[0]


def generated_ok(tmp_path: Path, schema: Schema | str, package: str = PACKAGE) -> Path:
    """Generate and assert success; returns the output directory."""
    run, out = generate(tmp_path, schema, package)
    assert run.returncode == 0, run.describe()
    return out


def run_python(out: Path, code: str) -> Run:
    """Run `code` in a fresh interpreter with `out` on the path (the generated package importable)."""
    env = {**_env(), "PYTHONPATH": str(out)}
    source = textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", source],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return Run(("python", "-c", "..."), done.returncode, done.stdout, done.stderr)


def python_ok(out: Path, code: str) -> str:
    """Run `code` against the generated package; assert it succeeds; return its stdout."""
    done = run_python(out, code)
    assert done.returncode == 0, done.describe()
    return done.stdout


def mutated(base: Callable[[], Schema], change: Callable[[Schema], object]) -> Schema:
    """`base()` changed in place by `change` (its return value ignored)."""
    schema = base()
    change(schema)
    return schema
