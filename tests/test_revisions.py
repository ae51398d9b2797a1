"""Every schema file of every revision in the shared directory generates and imports.

The revisions are listed by `manifest.json` of the shared directory (12 revisions; their
schema.unstable.json, schema.json and v1.schema.json, not the meta tables). Each is generated
through the CLI with the manifest's sha256, then imported in a fresh interpreter where every
`$defs` key must be importable from the package root. A schema with a sibling `meta*.json` (the
git-* revisions) is cross-checked against it during generation; an altered meta table must fail.

Each file is one test (xdist spreads them). The README's test command checks the oldest and the
newest revision (the newest is the pinned one); the ten between them run in `nox -s slow`.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_support import CliResult, run_cli, write_json

from acp_codegen.sources import default_shared_dir

EXPECTED_REVISIONS = 12


@dataclass(frozen=True)
class Case:
    """One schema file of one revision."""

    revision: str
    name: str
    path: Path
    sha256: str

    @property
    def package(self) -> str:
        return (
            "rev_"
            + re.sub(r"\W", "_", f"{self.revision}_{self.name.removesuffix('.json')}").lower()
        )

    @property
    def meta(self) -> Path:
        return self.path.with_name(self.path.name.replace("schema", "meta", 1))


def _cases() -> list[Case]:
    shared = default_shared_dir()
    manifest = shared / "manifest.json"
    if not manifest.is_file():
        return []
    revisions = json.loads(manifest.read_text(encoding="utf-8"))["revisions"]
    return [
        Case(str(rev["id"]), name, shared / str(rev["id"]) / name, str(sha))
        for rev in revisions
        for name, sha in rev["files"].items()
        if not name.startswith("meta")
    ]


CASES = _cases()
ABSENT = "shared schema directory is absent (set ACP_CODEGEN_SHARED)"
_ENDS = {CASES[0].revision, CASES[-1].revision} if CASES else set()
PARAMS = [
    pytest.param(
        c,
        id=f"{c.revision}/{c.name}",
        marks=[] if c.revision in _ENDS else [pytest.mark.slow],  # nox -s slow
    )
    for c in CASES
] or [pytest.param(None, marks=pytest.mark.skip(reason=ABSENT), id="absent")]

_IMPORT_SCRIPT = """
import importlib, json, sys, traceback
wanted = json.load(sys.stdin)
report = {}
for package, (sha256, names) in wanted.items():
    try:
        module = importlib.import_module(package)
    except Exception:
        report[package] = "import failed:\\n" + traceback.format_exc()
        continue
    problems = [f"{n} is not importable from the package root" for n in names if not hasattr(module, n)]
    if getattr(module, "SHA256", None) != sha256:
        problems.append(f"SHA256 is {getattr(module, 'SHA256', None)!r}, expected {sha256}")
    report[package] = "; ".join(problems) or None
print(json.dumps(report))
"""


@dataclass(frozen=True)
class Outcome:
    """What generating and importing one case did."""

    generate: CliResult
    import_problem: str | None


def generate_and_import(case: Case, out: Path) -> Outcome:
    """Generate one case through the CLI into `out`, then import it in a fresh interpreter."""
    generated = run_cli(
        "generate",
        "--schema",
        case.path,
        "--sha256",
        case.sha256,
        "--package",
        case.package,
        "--out",
        out,
    )
    if generated.returncode != 0:
        return Outcome(generated, "not imported")
    wanted = {case.package: (case.sha256, sorted(json.loads(case.path.read_bytes())["$defs"]))}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_SCRIPT],
        cwd=out,
        input=json.dumps(wanted),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        return Outcome(generated, f"importer crashed: {done.stderr}")
    report: dict[str, str | None] = json.loads(done.stdout.splitlines()[-1])
    return Outcome(generated, report.get(case.package, "not imported"))


def test_the_manifest_lists_every_revision(manifest: dict[str, Any]) -> None:
    revisions = manifest["revisions"]
    assert len(revisions) == EXPECTED_REVISIONS
    assert len(CASES) == sum(1 for r in revisions for n in r["files"] if not n.startswith("meta"))
    for case in CASES:
        assert case.path.is_file(), case.path
    names = {c.name for c in CASES}
    assert names == {"schema.unstable.json", "schema.json", "v1.schema.json"}


@pytest.mark.parametrize("case", PARAMS)
def test_revision_generates_and_imports(case: Case, tmp_path: Path) -> None:
    outcome = generate_and_import(case, tmp_path)
    result = outcome.generate
    assert result.returncode == 0, result.describe()
    assert "Traceback" not in result.output
    assert outcome.import_problem is None, f"{case.package}: {outcome.import_problem}"


def test_git_revisions_have_meta_tables_to_check_against() -> None:
    if not CASES:
        pytest.skip(ABSENT)
    with_meta = {c.revision for c in CASES if c.meta.is_file()}
    git = {c.revision for c in CASES if c.revision.startswith("git-")}
    assert git and with_meta == git, "every git-* schema, and only those, has a sibling meta file"


# --- the meta cross-check ---------------------------------------------------------------------


@pytest.fixture
def git_case() -> Case:
    chosen = [c for c in CASES if c.revision.startswith("git-") and c.name == "schema.json"]
    if not chosen:
        pytest.skip(ABSENT)
    return chosen[-1]


def _copy(case: Case, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    schema = tmp_path / case.name
    shutil.copyfile(case.path, schema)
    meta: dict[str, Any] = json.loads(case.meta.read_text(encoding="utf-8"))
    return schema, meta


def _generate(schema: Path, tmp_path: Path) -> CliResult:
    return run_cli(
        "generate",
        "--schema",
        schema,
        "--package",
        "checked",
        "--out",
        tmp_path / "out",
        cwd=tmp_path,
    )


def test_an_unaltered_meta_copy_passes(git_case: Case, tmp_path: Path) -> None:
    schema, meta = _copy(git_case, tmp_path)
    write_json(schema.with_name("meta.json"), meta)
    result = _generate(schema, tmp_path)
    assert result.returncode == 0, result.describe()


def test_a_meta_method_missing_from_the_schema_is_a_mismatch(
    git_case: Case, tmp_path: Path
) -> None:
    schema, meta = _copy(git_case, tmp_path)
    meta["agentMethods"]["bogus_method"] = "bogus/method"
    write_json(schema.with_name("meta.json"), meta)
    result = _generate(schema, tmp_path)
    assert result.returncode == 2, result.describe()
    expected = (
        f"error[meta-mismatch] {schema.with_name('meta.json')}#/agentMethods/bogus_method: "
        "agentMethods.bogus_method = 'bogus/method' has no agent-side method in the schema"
    )
    assert result.stderr.splitlines() == [expected], result.describe()
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_schema_method_missing_from_meta_is_a_mismatch(git_case: Case, tmp_path: Path) -> None:
    schema, meta = _copy(git_case, tmp_path)
    key, wire = min(meta["clientMethods"].items())
    del meta["clientMethods"][key]
    write_json(schema.with_name("meta.json"), meta)
    result = _generate(schema, tmp_path)
    assert result.returncode == 2, result.describe()
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error[meta-mismatch] "), result.describe()
    assert f"schema method {wire!r} (x-side client) is missing from the meta table" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_meta_table_that_is_not_json_is_reported(git_case: Case, tmp_path: Path) -> None:
    schema, _ = _copy(git_case, tmp_path)
    schema.with_name("meta.json").write_text("{not json", encoding="utf-8")
    result = _generate(schema, tmp_path)
    assert result.returncode == 2, result.describe()
    assert result.stderr.startswith(
        f"error[invalid-json] {schema.with_name('meta.json')}: invalid JSON"
    ), result.describe()
    assert len(result.stderr.splitlines()) == 1


# --- one handler name per method (item 9 of issue 34) -----------------------------------------
# The draft's git history has `mcp/message` as a request *and* a notification, both handled by
# the agent: the handler classes and the peers once defined `mcp_message` twice (mypy errors, and
# the notification handler shadowed at run time). The IR names the notification's handler
# `mcp_message_notification`.


def _generated(case: Case, out: Path) -> Path:
    outcome = generate_and_import(case, out)
    assert outcome.generate.returncode == 0, outcome.generate.describe()
    assert outcome.import_problem is None, f"{case.package}: {outcome.import_problem}"
    return out


_GIT_DRAFTS = [
    c for c in CASES if c.revision.startswith("git-") and c.name == "schema.unstable.json"
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.revision, marks=[] if c is _GIT_DRAFTS[-1] else [pytest.mark.slow])
        for c in _GIT_DRAFTS
    ]
    or [pytest.param(None, marks=pytest.mark.skip(reason=ABSENT), id="absent")],
)
def test_git_history_bindings_define_each_method_once_and_pass_mypy_strict(
    case: Case, tmp_path: Path, mypy_cache: Path
) -> None:
    # the newest git draft in the test command, the older ones in nox -s slow
    out = _generated(case, tmp_path / "out")
    tree = ast.parse((out / case.package / "dispatch.py").read_text(encoding="utf-8"))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        plain = [
            f.name
            for f in cls.body
            if isinstance(f, ast.AsyncFunctionDef | ast.FunctionDef)
            and not any(isinstance(d, ast.Name) and d.id == "overload" for d in f.decorator_list)
        ]
        twice = sorted({name for name in plain if plain.count(name) > 1})
        assert twice == [], f"{case.package}.{cls.name} defines {twice} more than once"
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(mypy_cache),
            case.package,
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


_MCP_AGENT = """
import asyncio
import sys

import {package} as acp


class McpAgent(acp.Agent):
    def __init__(self) -> None:
        self.noted: list[str] = []
        self.first = asyncio.Event()

    async def mcp_message(self, params: acp.MessageMcpRequest) -> acp.MessageMcpResponse:
        await asyncio.wait_for(self.first.wait(), 20)  # a guard, not a measurement
        return {{"seen": [*self.noted, params.method]}}

    async def mcp_message_notification(self, params: acp.MessageMcpNotification) -> None:
        self.noted.append(params.method)
        self.first.set()


asyncio.run(acp.serve_agent(McpAgent()))
"""


def test_a_request_and_a_notification_of_one_name_each_reach_their_own_handler(
    tmp_path: Path,
) -> None:
    import asyncio
    import importlib

    if not _GIT_DRAFTS:
        pytest.skip(ABSENT)
    case = _GIT_DRAFTS[-1]
    out = _generated(case, tmp_path)
    script = out / f"{case.package}_mcp_agent.py"
    script.write_text(_MCP_AGENT.format(package=case.package), encoding="utf-8")
    sys.path.insert(0, str(out))
    try:
        acp = importlib.import_module(case.package)
    finally:
        sys.path.remove(str(out))
    assert acp.AGENT_NOTIFICATIONS["mcp/message"].handler == "mcp_message_notification"
    assert acp.AGENT_REQUESTS["mcp/message"].handler == "mcp_message"

    async def scenario() -> Any:
        env = {**os.environ, "PYTHONPATH": str(out)}
        peer, connection, process = await acp.connect_agent(
            [sys.executable, str(script)], acp.Client(), env=env
        )
        async with connection:
            await peer.mcp_message_notification(
                acp.MessageMcpNotification.from_dict(
                    {"connectionId": "c1", "method": "notifications/initialized"}
                )
            )
            result = await peer.mcp_message(
                acp.MessageMcpRequest.from_dict({"connectionId": "c1", "method": "tools/list"})
            )
        await process.wait()
        return result

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == {
        "seen": ["notifications/initialized", "tools/list"]
    }
