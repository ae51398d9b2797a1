"""The two precision fixes: a renamed method is one METHOD_RENAMED; `proxy` is its own role."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diff_support import FIXTURES, fixture_changes, proxy_schema, run_cli

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.pipeline import ir_for


def _changes(tmp_path: Path, old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    paths = []
    for name, schema in (("old.json", old), ("new.json", new)):
        path = tmp_path / name
        path.write_text(json.dumps(schema), encoding="utf-8")
        paths.append(str(path))
    return [c.to_json() for c in diff_protocols(ir_for(paths[0]), ir_for(paths[1]))]


def test_renamed_method_is_one_breaking_change_for_both_sides() -> None:
    changes = fixture_changes(FIXTURES / "METHOD_RENAMED")
    rules = [c["rule"] for c in changes]
    assert "METHOD_REMOVED" not in rules and "METHOD_ADDED" not in rules
    (renamed,) = [c for c in changes if c["rule"] == "METHOD_RENAMED"]
    assert (renamed["level"], renamed["breaks"], renamed["old"], renamed["new"]) == (
        "breaking",
        ["agent", "client"],
        "pong",
        "pong/play",
    )
    assert [c["new"] for c in changes if c["rule"] == "CLASS_RENAMED"] == ["PongPlayRequest"]


def test_real_method_renames_are_recognised(shared_dir: Path) -> None:
    shared = shared_dir
    old = ir_for(str(shared / "git-7b8a7094" / "schema.unstable.json"))
    new = ir_for(str(shared / "git-a57b538d" / "schema.unstable.json"))
    changes = diff_protocols(old, new)
    renamed = sorted((c.old, c.new) for c in changes if c.rule == "METHOD_RENAMED")
    assert renamed == [("authenticate", "auth/login"), ("logout", "auth/logout")]
    removed = {c.path for c in changes if c.rule == "METHOD_REMOVED"}
    assert removed == {"session/load"}  # merged into session/resume: a real removal
    assert not {"auth/login", "auth/logout"} & {c.path for c in changes if c.rule == "METHOD_ADDED"}


def test_proxy_is_its_own_role(tmp_path: Path) -> None:
    old = proxy_schema({"properties": {"a": {"type": "integer"}}})
    new = proxy_schema(
        {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]}
    )
    (added,) = [c for c in _changes(tmp_path, old, new) if c["rule"] == "REQUIRED_FIELD_ADDED"]
    # agents send InitializeResponse, proxies send it wrapped in InitializeProxyResponse
    assert added["senders"] == ["agent", "proxy"]
    assert added["breaks"] == ["agent", "proxy"]


def test_proxy_method_changes_name_proxy_and_its_callers(tmp_path: Path) -> None:
    old = proxy_schema({"properties": {}})
    new = json.loads(json.dumps(old))
    new["$defs"]["InitializeProxyRequest"]["description"] = "**UNSTABLE**\n\nnow unstable"
    (marked,) = [c for c in _changes(tmp_path, old, new) if c["rule"] == "UNSTABLE_MARK_ADDED"]
    assert (marked["path"], marked["breaks"], marked["senders"]) == (
        "proxy/initialize",
        ["client", "proxy"],
        ["client"],
    )


def test_rule_table_lists_method_renamed() -> None:
    run = run_cli("diff", "--rules", "--format", "json")
    rows = {r["id"]: r for r in json.loads(run.stdout)["rules"]}
    assert (
        rows["METHOD_RENAMED"]["level"] == "breaking" and rows["METHOD_RENAMED"]["breaks"] == "both"
    )


def _write_pair(tmp_path: Path, old: dict[str, Any], new: dict[str, Any]) -> tuple[Path, Path]:
    paths = (tmp_path / "old.json", tmp_path / "new.json")
    for path, schema in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(schema), encoding="utf-8")
    return paths


def test_cli_names_proxy_in_breaks(tmp_path: Path) -> None:
    old = proxy_schema({"properties": {"a": {"type": "integer"}}})
    new = proxy_schema(
        {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]}
    )
    old_path, new_path = _write_pair(tmp_path, old, new)
    as_json = run_cli("diff", old_path, new_path, "--format", "json")
    assert as_json.returncode == 1, as_json.describe()  # breaking
    (change,) = json.loads(as_json.stdout)["changes"]
    assert (change["rule"], change["path"], change["breaks"]) == (
        "REQUIRED_FIELD_ADDED",
        "InitializeResponse.b",
        ["agent", "proxy"],
    )
    as_text = run_cli("diff", old_path, new_path, "--format", "text")
    assert as_text.returncode == 1, as_text.describe()
    (line,) = [ln for ln in as_text.stdout.splitlines() if "REQUIRED_FIELD_ADDED" in ln]
    assert "InitializeResponse.b" in line and line.endswith("(breaks agent + proxy)")


def test_cli_names_proxy_for_a_proxy_method(tmp_path: Path) -> None:
    old = proxy_schema({"properties": {}})
    new = json.loads(json.dumps(old))
    new["$defs"]["InitializeProxyRequest"]["description"] = "**UNSTABLE**\n\nnow unstable"
    old_path, new_path = _write_pair(tmp_path, old, new)
    as_json = run_cli("diff", old_path, new_path, "--format", "json", "--fail-on", "none")
    assert as_json.returncode == 0, as_json.describe()
    (change,) = [
        c for c in json.loads(as_json.stdout)["changes"] if c["rule"] == "UNSTABLE_MARK_ADDED"
    ]
    assert (change["path"], change["breaks"]) == ("proxy/initialize", ["client", "proxy"])
    as_text = run_cli("diff", old_path, new_path, "--format", "text", "--fail-on", "none")
    (line,) = [ln for ln in as_text.stdout.splitlines() if "UNSTABLE_MARK_ADDED" in ln]
    assert "proxy/initialize" in line and line.endswith("(breaks client + proxy)")
