"""Each diff rule against its fixture pair, plus the direction cases the issue spells out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from diff_support import FIXTURES, fixture_changes, fixture_dirs

from acp_codegen.diff.rules import BY_ID, CATEGORIES, LEVELS, RULES


def _expected(directory: Path) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    changes: list[dict[str, Any]] = data["changes"]
    return changes


def _only(rule_id: str) -> dict[str, Any]:
    """The single change of a fixture made by its own rule."""
    found = [c for c in fixture_changes(FIXTURES / rule_id) if c["rule"] == rule_id]
    assert len(found) == 1, found
    return found[0]


def test_every_rule_has_exactly_one_fixture() -> None:
    names = {p.name for p in fixture_dirs()}
    assert names == set(BY_ID), f"missing: {set(BY_ID) - names}, unknown: {names - set(BY_ID)}"
    for directory in fixture_dirs():
        assert {p.name for p in directory.iterdir()} == {"old.json", "new.json", "expected.json"}


def test_rules_are_well_formed() -> None:
    assert len(BY_ID) == len(RULES)
    for rule in RULES:
        assert (
            rule.id.isupper()
            and rule.level in LEVELS
            and rule.category in CATEGORIES
            and rule.purpose
        )


@pytest.mark.parametrize("directory", fixture_dirs(), ids=lambda p: p.name)
def test_fixture(directory: Path) -> None:
    actual = fixture_changes(directory)
    assert directory.name in {
        c["rule"] for c in actual
    }, f"{directory.name} does not fire on its own fixture"
    assert actual == _expected(
        directory
    ), "run tests/diff/regen.py and review the diff if this change is intended"


def test_required_field_in_client_message_breaks_clients() -> None:
    change = _only("FIELD_BECAME_REQUIRED")
    assert (change["level"], change["breaks"], change["senders"]) == (
        "breaking",
        ["client"],
        ["client"],
    )


def test_both_pairings_flip_the_verdict() -> None:
    # the same pair read the other way round: optional in what the agent sends breaks clients
    reverse = _only("FIELD_BECAME_OPTIONAL")
    assert (reverse["level"], reverse["breaks"], reverse["senders"]) == (
        "breaking",
        ["client"],
        ["agent"],
    )
    widened, narrowed = _only("TYPE_WIDENED"), _only("TYPE_NARROWED")
    assert widened["senders"] == ["agent"] and widened["breaks"] == ["client"]  # the receiver
    assert narrowed["senders"] == ["client"] and narrowed["breaks"] == ["client"]  # the sender


def test_open_additions_break_nobody() -> None:
    for rule_id in ("VARIANT_ADDED", "ENUM_VALUE_ADDED"):
        change = _only(rule_id)
        assert (change["level"], change["breaks"]) == ("info", []), rule_id


def test_closed_enum_value_added_breaks_the_receiver() -> None:
    change = _only("CLOSED_ENUM_VALUE_ADDED")
    assert change["senders"] == ["agent"]
    assert (change["level"], change["breaks"]) == ("breaking", ["client"])


def test_variant_removed_to_fallback_is_a_semantic_break_for_the_sender() -> None:
    falls_back = _only("VARIANT_REMOVED")
    assert (falls_back["level"], falls_back["breaks"]) == ("warning", ["agent"])
    rejected = _only("VARIANT_REMOVED_FROM_CLOSED_UNION")
    assert (rejected["level"], rejected["breaks"]) == ("breaking", ["agent"])


def test_method_removed_breaks_the_caller_not_the_handler() -> None:
    change = _only("METHOD_REMOVED")  # `pong` is handled by the agent (x-side), called by clients
    assert change["breaks"] == ["client"]


def test_wire_rename_with_the_same_python_name_is_not_a_code_change() -> None:
    rules = {c["rule"] for c in fixture_changes(FIXTURES / "FIELD_RENAMED")}
    assert rules == {"FIELD_RENAMED"}
    rules = {c["rule"] for c in fixture_changes(FIXTURES / "ATTRIBUTE_RENAMED")}
    assert rules == {"FIELD_RENAMED", "ATTRIBUTE_RENAMED"}


def test_renamed_definition_is_compared_as_one() -> None:
    rules = {c["rule"] for c in fixture_changes(FIXTURES / "DEFINITION_RENAMED")}
    assert rules == {
        "DEFINITION_RENAMED",
        "CLASS_RENAMED",
    }  # no METHOD_PARAMS_CHANGED, no add/remove


def test_docs_list_the_rule_table() -> None:
    from rich.console import Console

    from acp_codegen.diff.render import render_rules
    from acp_codegen.sources import project_root

    docs = (project_root() / "docs" / "diff.md").read_text(encoding="utf-8")
    table = render_rules("markdown", Console())
    assert (
        table is not None and table in docs
    ), "paste `acp-codegen diff --rules --format markdown` into docs/diff.md"
