"""Rewrite the expected outputs of the diff fixtures and goldens from the current code.

Run `python tests/diff/regen.py` after changing a rule on purpose, then READ the resulting
`git diff` of tests/diff/ before committing: these files are the reviewed expectations.
"""

from __future__ import annotations

import json

from diff_support import (
    GOLDEN,
    GOLDEN_PAIRS,
    fixture_changes,
    fixture_dirs,
    golden_name,
    golden_result,
)

from acp_codegen.diff.render import render_json, render_markdown
from acp_codegen.sources import default_shared_dir


def main() -> None:
    """Rewrite every expected.json and every golden file."""
    for directory in fixture_dirs():
        payload = {"changes": fixture_changes(directory)}
        (directory / "expected.json").write_text(
            json.dumps(payload, indent=2) + "\n", encoding="utf-8"
        )
    shared = default_shared_dir()
    if not (shared / "manifest.json").is_file():
        print(f"shared directory {shared} absent: goldens left as they are")
        return
    for old_id, new_id in GOLDEN_PAIRS:
        result = golden_result(shared, old_id, new_id)
        stem = golden_name(old_id, new_id)
        (GOLDEN / f"{stem}.json").write_text(render_json([result]), encoding="utf-8")
        (GOLDEN / f"{stem}.md").write_text(render_markdown([result]), encoding="utf-8")


if __name__ == "__main__":
    main()
