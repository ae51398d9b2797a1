"""session.py across schema revisions: which packages get one, and that older shapes still work.

Every revision of the shared directory is rendered in-process: a revision with the v2 message-id
model (`user_message` and `agent_message` in `SessionUpdate`) gets a `session.py` that compiles,
any other gets none. One older draft (plans keyed by `id`, `_meta` without patch semantics, no
terminals) is generated, imported and driven.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_support import run_cli

from acp_codegen.ir.nodes import TaggedUnion
from acp_codegen.pipeline import ir_for
from acp_codegen.render.package import render_package


def _revisions(shared: Path) -> list[tuple[str, Path, str]]:
    manifest = json.loads((shared / "manifest.json").read_text(encoding="utf-8"))
    return [
        (f"{rev['id']}/{name}", shared / rev["id"] / name, sha)
        for rev in manifest["revisions"]
        for name, sha in rev["files"].items()
        if not name.startswith("meta")
    ]


def test_every_revision_gets_a_reducer_exactly_when_it_has_the_message_id_model(
    shared_dir: Path,
) -> None:
    with_reducer = []
    for name, path, sha in _revisions(shared_dir):
        protocol = ir_for(str(path), sha)
        union = protocol.by_def_name("SessionUpdate")
        expected = isinstance(union, TaggedUnion) and {"user_message", "agent_message"} <= set(
            union.known_tags
        )
        files = render_package(protocol, "pkg", "acp-codegen generate pkg")
        assert ("session.py" in files) == expected, name
        assert ("from .session import" in files["__init__.py"]) == expected, name
        if expected:
            compile(files["session.py"], f"{name}/session.py", "exec")
            with_reducer.append(name)
    assert with_reducer and "git-b4edad80/schema.json" not in with_reducer
    assert not [n for n in with_reducer if n.endswith("v1.schema.json")]


_DRIVE = """
import json, sys
import old_draft as acp
state = acp.SessionState()
for line in sys.stdin:
    state.apply_data(line)
message = state.message("agent_message", "m1")
print(json.dumps({
    "text": [b.text for b in message.content],
    "meta": message.meta,
    "plans": [e.plan_id for e in state.timeline if isinstance(e, acp.TimelinePlan)],
    "kinds": [type(e).__name__ for e in state.timeline],
    "state": [state.state, state.stop_reason],
}))
"""


def test_an_older_draft_generates_imports_and_applies(shared_dir: Path, tmp_path: Path) -> None:
    _, path, sha = next(
        r for r in _revisions(shared_dir) if r[0] == "git-7b8a7094/schema.unstable.json"
    )
    result = run_cli(
        "generate", "--schema", path, "--sha256", sha, "--package", "old_draft", "--out", tmp_path
    )
    assert result.returncode == 0, result.describe()
    updates: list[dict[str, Any]] = [
        {
            "sessionUpdate": "agent_message",
            "messageId": "m1",
            "content": [{"type": "text", "text": "A"}],
            "_meta": {"a": 1},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "id": "p1", "entries": []}},
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "B"},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "id": "p2", "entries": []}},
        {"sessionUpdate": "plan_removed", "id": "p1"},
        {"sessionUpdate": "terminal_update", "terminalId": "t1"},  # not in this revision: kept raw
        {"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"b": 2}},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]
    done = subprocess.run(
        [sys.executable, "-c", _DRIVE],
        check=False,
        input="".join(json.dumps(u) + "\n" for u in updates),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "text": ["A", "B"],
        "meta": {
            "b": 2
        },  # this revision's message _meta has no patch semantics: the latest is kept
        "plans": ["p2"],
        "kinds": ["TimelineMessage", "TimelinePlan", "TimelineRaw"],
        "state": ["idle", "end_turn"],
    }
