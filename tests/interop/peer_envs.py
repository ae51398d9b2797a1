"""Third-party ACP peers, installed from this repository's own files, one environment per peer.

Their dependencies clash (the PyPI SDK 1.0.0rc3 next to the test extra's 0.12, pydantic-ai,
fast-agent's hundred-odd packages, a node 22 for acpx), so each gets its own: a Python venv from
`tests/interop/peers/<name>.txt`, or `npm install` of `tests/interop/peers/<name>/package.json`.
They live under `$ACP_CODEGEN_PEERS` (default `~/.cache/acp-codegen/peers`), named after the
file's sha256, so a changed pin makes a new environment and an unchanged one is reused across
runs and clones; a lock file keeps parallel workers from installing the same one twice. An
install that fails is an error with pip's or npm's output, never a skip: a peer that cannot be
had is something to know.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PEERS_DIR = Path(__file__).resolve().parent / "peers"
INSTALL_TIMEOUT = 900.0  # a guard against a hang, never a measurement


class PeerUnavailable(Exception):
    """The peer's environment cannot be made here (its installer failed, or its Python is absent)."""


def cache_root() -> Path:
    """Where the peers' environments live."""
    configured = os.environ.get("ACP_CODEGEN_PEERS")
    return Path(configured) if configured else Path.home() / ".cache" / "acp-codegen" / "peers"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(argv: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise PeerUnavailable(
            f"`{' '.join(argv)}` exited {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )


def python_peer(name: str, python: str | None = None) -> Path:
    """The bin directory of the venv holding `peers/<name>.txt` (made once; `python` makes it,
    default this interpreter)."""
    requirements = PEERS_DIR / f"{name}.txt"
    digest = hashlib.sha256(requirements.read_bytes() + (python or "").encode()).hexdigest()[:16]
    home = cache_root() / f"{name}-{digest}"
    bin_dir = home / "bin"
    with _locked(cache_root() / f".{name}.lock"):
        if (home / ".installed").is_file():
            return bin_dir
        shutil.rmtree(home, ignore_errors=True)
        interpreter = find_python(python) if python else sys.executable
        _run([interpreter, "-m", "venv", str(home)])
        _run(
            [
                str(bin_dir / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--pre",
                "-r",
                str(requirements),
            ]
        )
        (home / ".installed").write_text(requirements.read_text(encoding="utf-8"), encoding="utf-8")
    return bin_dir


def find_python(name: str) -> str:
    """An interpreter called `name` (`python3.13`) that runs: on PATH, else one pyenv installed."""
    candidates = [shutil.which(name)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += [str(p) for p in sorted(pyenv.glob(f"*/bin/{name}"), reverse=True)]
    for candidate in candidates:
        if (
            candidate is not None
            and subprocess.run(
                [candidate, "-c", "pass"], capture_output=True, timeout=60, check=False
            ).returncode
            == 0
        ):
            return candidate
    raise PeerUnavailable(f"needs {name}, which is not on this machine (nor installed by pyenv)")


def sdk_modules() -> None:
    """tests/interop's own node modules (the TypeScript SDK), installed once as its conftest does."""
    interop = PEERS_DIR.parent
    if (interop / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").is_file():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise PeerUnavailable("the TypeScript SDK needs npm, which is not on PATH")
    with _locked(interop / "node_modules" / ".acp-codegen-install.lock"):
        _run([npm, "install", "--no-audit", "--no-fund"], cwd=interop)


def npm_peer(name: str) -> Path:
    """The `node_modules/.bin` directory of `peers/<name>/package.json`, installed once."""
    manifest = PEERS_DIR / name / "package.json"
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()[:16]
    home = cache_root() / f"{name}-{digest}"
    with _locked(cache_root() / f".{name}.lock"):
        if not (home / ".installed").is_file():
            npm = shutil.which("npm")
            if npm is None:
                raise PeerUnavailable(f"{name} needs npm, which is not on PATH")
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(parents=True)
            shutil.copy(manifest, home / "package.json")
            _run([npm, "install", "--no-audit", "--no-fund"], cwd=home)
            (home / ".installed").write_text(manifest.read_text(encoding="utf-8"), encoding="utf-8")
    return home / "node_modules" / ".bin"
