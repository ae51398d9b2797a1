"""Every example in docs/proxies.md runs: `python file=NAME` blocks are written out, every other
`python` block runs as a script next to them (the chain is real: acp-conductor and subprocesses)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from chain_support import ROOT, chain_env
from cli_support import python_blocks, write_example

DOC = ROOT / "docs" / "proxies.md"


def _blocks() -> list[tuple[str | None, str]]:
    return python_blocks(DOC)


def test_the_guide_has_examples() -> None:
    blocks = _blocks()
    assert len([b for b in blocks if b[0] is None]) >= 2 and len([b for b in blocks if b[0]]) >= 3


@pytest.mark.timeout(90)
@pytest.mark.parametrize("index", [i for i, (name, _) in enumerate(_blocks()) if name is None])
def test_example_runs(index: int, tmp_path: Path) -> None:
    script = write_example(DOC, index, tmp_path)
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=chain_env(),
        check=False,
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert result.returncode == 0, result.stdout + result.stderr
