"""The scaffolded client shows an agent's text as text (issue 32, requirement 4): escape
sequences (clipboard, title, clear, hyperlink, CSI, C1, bidirectional overrides) are made
visible, never written to the terminal, and permission option names are not rich markup: `[/]`
neither crashes the handler nor hides the question, and a name cannot print extra option lines.

A client scaffolded with the defaults runs as `python -m my_client` against
`hostile_terminal_agent.py` over real pipes; its stdout bytes are what a terminal would get.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_cli

HERE = Path(__file__).resolve().parent
TIMEOUT = 60  # a guard against a hang (the old client hung after -32603), not a speed assertion


@pytest.fixture(scope="module")
def client_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("terminal")
    result = run_cli("scaffold", "client", base / "my-client")
    assert result.returncode == 0, result.describe()
    return base / "my-client"


def test_agent_text_cannot_reach_the_terminal_as_control_sequences(client_project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(client_project), "COLUMNS": "200"}
    agent = [sys.executable, str(HERE / "hostile_terminal_agent.py"), "my_client"]
    done = subprocess.run(
        [sys.executable, "-m", "my_client", "hello", "--", *agent],
        cwd=client_project,
        env=env,
        input=b"1\n",
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    out = done.stdout.decode("utf-8")
    assert done.returncode == 0, out + done.stderr.decode()
    for control in ("\x1b", "\x07", "\x08", "\r", "\x9b", "\x9c", "\x9d", "\u202e", "\u202c"):
        assert control not in out, (control, out)
    assert "<0:␛]52;c;aGFja2Vk␇>" in out and "<3:␛]8;;https://evil.example␛\\click" in out
    assert "\\x9b2J\\x9d0;c1 title\\x9c" in out and "\\u202eevil\\u202c" in out
    assert "connected to Hostile␛]0;title␇ 1" in out
    # The question is shown, its options as they are named, each on its own line.
    assert "permission: Go␛[2J?" in out
    assert "  1) [/] (allow_once)" in out and "  2) [bold red]Allow[/] (allow_once)" in out
    assert "  3) ok␤  3) Fake option (allow_once)" in out
    assert not any(line.startswith("  3) Fake") for line in out.splitlines())
    assert "⚙ tool␛]0;t␇␤fake line [pending]" in out
    assert "agent: got selected slash" in out  # the handler answered: no -32603
