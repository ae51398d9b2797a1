"""docs/remote.md shows the HAProxy configuration `nox -s cluster` runs, as it is (issue 35,
requirement 5): the file's directives, from `global` on, are the docs' `haproxy` block."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_show_the_configuration_the_cluster_runs() -> None:
    config = (ROOT / "tests" / "cluster" / "haproxy.cfg").read_text("utf-8")
    docs = (ROOT / "docs" / "remote.md").read_text("utf-8")
    shown = re.search(r"```haproxy\n(.*?)```", docs, re.S)
    assert shown is not None, "docs/remote.md has no haproxy block"
    assert shown.group(1) == config[config.index("global\n") :]
