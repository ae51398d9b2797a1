"""The report's "Python API changes" section, through `acp-codegen upgrade --dry-run`, for real revision pairs.

Each pair is from the shared schema directory and shows one kind of change a user of the bindings
must act on: a class renamed (npm-2.0.0 -> npm-2.1.0); attributes and handler methods renamed and a
handler removed (git-7b8a7094 -> git-a57b538d); `on_<variant>` hooks added and removed
(git-b4edad80 -> git-7b8a7094). Every entry is `old -> new` (or the one name) under a heading that
says what to do.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from upgrade_support import run_cli

from acp_codegen.sources import default_shared_dir

pytestmark = pytest.mark.usefixtures(
    "shared_dir"
)  # the schema revisions of ../shared (skips without)

FILE = "schema.unstable.json"


def _section(tmp_path: Path, old: str, new: str) -> dict[str, list[str]]:
    """The dry-run report's Python API changes: heading (kind and action) -> its entries."""
    old_file, new_file = (default_shared_dir() / rev / FILE for rev in (old, new))
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "pins.toml").write_text(
        f'[[target]]\nname = "draft"\npackage = "acp_v2_draft"\nsource = "{old_file}"\n'
        f'sha256 = "{hashlib.sha256(old_file.read_bytes()).hexdigest()}"\n',
        encoding="utf-8",
    )
    before = (tmp_path / "schema" / "pins.toml").read_bytes()
    run = run_cli(
        "upgrade",
        "draft",
        "--to",
        str(new_file),
        "--dry-run",
        env={**os.environ, "ACP_CODEGEN_CACHE": str(tmp_path / "cache")},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.describe()
    assert (tmp_path / "schema" / "pins.toml").read_bytes() == before and not (
        tmp_path / "generated"
    ).exists()
    section = run.stdout.split("## Python API changes\n", 1)[1]
    groups: dict[str, list[str]] = {}
    for heading, body in re.findall(r"^### (.+)\n\n((?:- .+\n)+)", section, flags=re.MULTILINE):
        groups[re.sub(r" \(\d+\):", ":", heading)] = [line[2:] for line in body.splitlines()]
    return groups


@pytest.mark.parametrize(
    ("old", "new", "heading", "entries"),
    [
        pytest.param(
            "npm-2.0.0",
            "npm-2.1.0",
            "Class renamed: rename imports and uses (`acp-codegen migrate` does it)",
            ["`AuthCapabilities` -> `ClientAuthCapabilities`"],
            id="class-renamed",
        ),
        pytest.param(
            "git-7b8a7094",
            "git-a57b538d",
            "Handler renamed: rename the method in your subclass (`acp-codegen migrate` does it)",
            ["`Agent.authenticate` -> `Agent.auth_login`", "`Agent.logout` -> `Agent.auth_logout`"],
            id="handler-renamed",
        ),
        pytest.param(
            "git-7b8a7094",
            "git-a57b538d",
            "Handler removed: delete the method from your subclass: nobody calls it any more (by hand)",
            ["`Agent.session_load`"],
            id="handler-removed",
        ),
        pytest.param(
            "git-b4edad80",
            "git-7b8a7094",
            "Hook removed: delete the hook from your subclass: that update is no longer sent (by hand)",
            ["`Client.on_tool_call`"],
            id="hook-removed",
        ),
        pytest.param(
            "git-b4edad80",
            "git-7b8a7094",
            "Hook added: override it to handle the new update (optional)",
            [
                "`Client.on_agent_message`",
                "`Client.on_agent_thought`",
                "`Client.on_state_update`",
                "`Client.on_tool_call_content_chunk`",
                "`Client.on_user_message`",
            ],
            id="hook-added",
        ),
    ],
)
def test_section_lists_the_change_with_what_to_do(
    tmp_path: Path, old: str, new: str, heading: str, entries: list[str]
) -> None:
    groups = _section(tmp_path, old, new)
    assert groups.get(heading) == entries, sorted(groups)


def test_attribute_renames_of_a_real_pair(tmp_path: Path) -> None:
    groups = _section(tmp_path, "git-7b8a7094", "git-a57b538d")
    renamed = groups[
        "Attribute renamed: rename the attribute and keyword arguments (`acp-codegen migrate` does it)"
    ]
    assert len(renamed) == 22  # the pair's 22 renamed attributes, each old -> new
    assert "`ConnectMcpRequest.acp_id` -> `ConnectMcpRequest.server_id`" in renamed
    assert "`SessionConfigSelectGroup.group` -> `SessionConfigSelectGroup.group_id`" in renamed
    assert all(re.fullmatch(r"`(\w+)\.\w+` -> `\1\.\w+`", entry) for entry in renamed)
    assert (
        "`AuthenticateRequest` -> `LoginAuthRequest`"
        in groups["Class renamed: rename imports and uses (`acp-codegen migrate` does it)"]
    )
    assert (
        "`InitializeRequest.client_info`"
        in groups["Attribute removed: stop reading or passing it (by hand)"]
    )
