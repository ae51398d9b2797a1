"""The pin edit (tomlkit, style kept, history created when missing) and npm version order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from upgrade_support import PINS_2_2, FakeNpm, run_cli

from acp_codegen.errors import CodegenError
from acp_codegen.pins import PinnedSource, load_pins
from acp_codegen.upgrade.pinedit import check_pins_text, edited_pins
from acp_codegen.upgrade.registry import Releases, parse_view

V1 = "npm:@agentclientprotocol/sdk@{}#schema/v1/schema.json"


def test_history_is_created_in_the_file_style_and_validates() -> None:
    text = PINS_2_2.read_text(encoding="utf-8")
    first = edited_pins(text, PINS_2_2, "acp_v1", PinnedSource(V1.format("2.5.0"), "a" * 64))
    second = edited_pins(first, PINS_2_2, "acp_v1", PinnedSource(V1.format("2.6.0"), "b" * 64))
    tail = second.split('name = "acp_v1"', 1)[1]
    assert tail.endswith(
        f'source = "{V1.format("2.6.0")}"\nsha256 = "{"b" * 64}"\nhistory = [\n'
        f'  {{ source = "{V1.format("2.4.0")}", sha256 = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a" }},\n'
        f'  {{ source = "{V1.format("2.5.0")}", sha256 = "{"a" * 64}" }},\n]\n'
    )
    assert (
        second.split('name = "acp_v1"', 1)[0] == text.split('name = "acp_v1"', 1)[0]
    )  # the rest untouched
    pins = check_pins_text(second, PINS_2_2)
    v1 = pins.get("acp_v1")
    assert v1 is not None and [h.source for h in v1.history] == [
        V1.format("2.4.0"),
        V1.format("2.5.0"),
    ]


def test_an_edit_that_would_not_validate_is_refused() -> None:
    text = PINS_2_2.read_text(encoding="utf-8")
    with pytest.raises(CodegenError) as error:
        check_pins_text(
            edited_pins(text, PINS_2_2, "acp_v1", PinnedSource("npm:bad", "c" * 64)), PINS_2_2
        )
    assert error.value.diagnostics[0].code == "bad-pins"
    assert load_pins(PINS_2_2).get("acp_v1") is not None  # nothing was written


def test_versions_are_ordered_as_semver() -> None:
    releases = Releases(
        "p", ("2.9.0", "2.10.0", "2.10.0-beta.2", "2.10.0-beta.10", "1.0.0", "latest"), ()
    )
    assert releases.newer_than("2.9.0") == ("2.10.0",)
    assert releases.newer_than("2.9.0", prereleases=True) == (
        "2.10.0-beta.2",
        "2.10.0-beta.10",
        "2.10.0",
    )
    assert releases.newer_than("2.10.0-beta.2") == ("2.10.0-beta.10", "2.10.0")
    assert releases.newer_than("2.10.0") == ()
    assert parse_view(
        "p", json.dumps({"versions": "1.0.0", "dist-tags": {"latest": "1.0.0"}})
    ).versions == ("1.0.0",)
    with pytest.raises(CodegenError):
        parse_view("p", "npm ERR! not json")


def test_outdated_for_one_ad_hoc_source(fake_npm: FakeNpm, tmp_path: Path) -> None:
    source = "npm:@agentclientprotocol/sdk@2.2.0#schema/v2/schema.unstable.json"
    sha = "67d41c3c5f3320b99c27203f2b0381652ecc3428420b17f4ad5dbf4510c1f2b9"
    run = run_cli(
        "outdated",
        "--schema",
        source,
        "--sha256",
        sha,
        "--format",
        "json",
        env=fake_npm.env(tmp_path / "cache"),
        cwd=tmp_path,
    )
    (row,) = json.loads(run.stdout)["targets"]
    assert run.returncode == 1 and (row["status"], row["newest"]) == (
        "outdated",
        "2.4.0",
    ), run.describe()
