"""Rewrite the upgrade goldens (pin file and report of npm-2.2.0 -> npm-2.4.0) from the current code.

Run `python tests/upgrade/regen.py` after changing the report or the pin edit on purpose, then READ
the `git diff` of tests/upgrade/golden/ before committing. The regenerated package is not stored
here: it must equal the project's own `generated/acp_v2_draft` (the pinned npm-2.4.0).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from upgrade_support import GOLDEN, FakeNpm, project_copy, run_cli

from acp_codegen.sources import default_shared_dir


def main() -> None:
    """Run the golden upgrade in a temporary project and keep its pin file and report."""
    if not (default_shared_dir() / "manifest.json").is_file():
        print(f"shared directory {default_shared_dir()} absent: upgrade goldens left as they are")
        return
    with tempfile.TemporaryDirectory(prefix="acp-codegen-regen-") as tmp:
        root = Path(tmp)
        npm = FakeNpm(root / "registry")
        for version in ("2.2.0", "2.4.0"):
            npm.publish(version, f"npm-{version}")
        project = project_copy(root / "project")
        run = run_cli(
            "upgrade",
            "acp_v2_draft",
            "--pins",
            "schema/pins.toml",
            "--report",
            "report.md",
            env=npm.env(root / "cache"),
            cwd=project,
        )
        if run.returncode != 0:
            raise SystemExit(run.describe())
        GOLDEN.mkdir(exist_ok=True)
        (GOLDEN / "pins-npm-2.4.0.toml").write_bytes(
            (project / "schema" / "pins.toml").read_bytes()
        )
        (GOLDEN / "npm-2.2.0__npm-2.4.0.report.md").write_bytes(
            (project / "report.md").read_bytes()
        )


if __name__ == "__main__":
    main()
