"""`acp_codegen.fast_exit`: the CLI's process ends at once, with what a normal exit would have kept:
its status, its flushed output, its `atexit` callbacks and finalizers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(body: str) -> subprocess.CompletedProcess[str]:
    code = f"import atexit, sys, tempfile\nfrom acp_codegen.fast_exit import run_and_exit\n{body}"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_the_status_and_unflushed_output_survive() -> None:
    done = _run("run_and_exit(lambda: (sys.stdout.write('no newline, not flushed'), sys.exit(3)))")
    assert (done.returncode, done.stdout) == (3, "no newline, not flushed")
    assert _run("run_and_exit(lambda: None)").returncode == 0
    assert _run("run_and_exit(lambda: sys.exit(None))").returncode == 0


def test_a_message_status_is_printed_and_exits_1() -> None:
    done = _run("run_and_exit(lambda: sys.exit('went wrong'))")
    assert (done.returncode, done.stderr) == (1, "went wrong\n")


def test_atexit_callbacks_and_finalizers_run(tmp_path: Path) -> None:
    marker = tmp_path / "left"
    body = (
        "atexit.register(lambda: print('atexit ran'))\n"
        f"kept = tempfile.TemporaryDirectory(dir={str(tmp_path)!r})\n"
        f"open({str(marker)!r}, 'w').write(kept.name)\n"
        "run_and_exit(lambda: None)\n"
    )
    done = _run(body)
    assert (done.returncode, done.stdout) == (0, "atexit ran\n")
    assert not Path(marker.read_text()).exists()  # the temporary directory's finalizer ran


def test_the_cli_entry_exits_with_its_commands_status() -> None:
    version = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert version.returncode == 0 and version.stdout.strip()
    bad = subprocess.run(
        [sys.executable, "-m", "acp_codegen", "generate", "--no-such-option"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert bad.returncode == 2 and "no-such-option" in bad.stderr
