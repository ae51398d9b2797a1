"""Helpers for the upgrade tests: tarballs built from shared revisions, the fake npm, running the CLI.

Tarballs lay the shared files out as `@agentclientprotocol/sdk` does (`package/schema/v2/
schema.unstable.json`, `package/schema/v2/schema.json`, `package/schema/v1/schema.json`), with
fixed metadata so they are byte-for-byte reproducible.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_codegen.sources import default_shared_dir, project_root

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
FAKE_NPM_DIR = HERE / "fake_npm"
PACKAGE = "@agentclientprotocol/sdk"
_LAYOUT = {
    "schema.unstable.json": "schema/v2/schema.unstable.json",
    "schema.json": "schema/v2/schema.json",
    "v1.schema.json": "schema/v1/schema.json",
}


def build_tarball(
    revision: str,
    destination: Path,
    *,
    replace: dict[str, bytes] | None = None,
    drop: tuple[str, ...] = (),
) -> Path:
    """An npm-style tarball of a shared revision (`npm-2.4.0`), optionally with files replaced or left out."""
    files: dict[str, bytes] = {}
    for name, inner in _LAYOUT.items():
        path = default_shared_dir() / revision / name
        if path.is_file():
            files[inner] = path.read_bytes()
    files.update(replace or {})
    for inner in drop:
        files.pop(inner)
    files["package.json"] = json.dumps(
        {"name": PACKAGE, "version": revision.removeprefix("npm-")}
    ).encode()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for inner, data in sorted(files.items()):
            info = tarfile.TarInfo(f"package/{inner}")
            info.size, info.mtime, info.mode = len(data), 499162500, 0o644
            tar.addfile(info, io.BytesIO(data))
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    return destination


@dataclass
class FakeNpm:
    """A fake registry served by `fake_npm/npm`; `env` runs a command against it."""

    root: Path
    versions: dict[str, Path] = field(default_factory=dict)  # version -> tarball
    unreachable: bool = False

    def publish(self, version: str, revision: str, **kwargs: Any) -> None:
        """Make `version` available, packed from a shared revision."""
        self.versions[version] = build_tarball(
            revision, self.root / "tarballs" / f"{version}.tgz", **kwargs
        )

    @property
    def log(self) -> Path:
        """One JSON line per npm call."""
        return self.root / "npm-calls.jsonl"

    def calls(self) -> list[list[str]]:
        """The npm calls made so far."""
        if not self.log.is_file():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def env(self, cache: Path) -> dict[str, str]:
        """An environment whose `npm` is the fake, with its own acp-codegen cache."""
        registry = self.root / "registry.json"
        stable = [v for v in self.versions if "-" not in v]
        package = {
            "versions": list(self.versions),
            "dist-tags": {"latest": stable[-1] if stable else ""},
            "tarballs": {v: str(p) for v, p in self.versions.items()},
        }
        registry.write_text(
            json.dumps(
                {
                    "packages": {PACKAGE: package},
                    "unreachable": self.unreachable,
                    "log": str(self.log),
                }
            ),
            encoding="utf-8",
        )
        return {
            **os.environ,
            "PATH": f"{FAKE_NPM_DIR}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_NPM_REGISTRY": str(registry),
            "ACP_CODEGEN_CACHE": str(cache),
        }


PINS_2_2 = HERE / "fixtures" / "pins-npm-2.2.0.toml"
STALE_MARK = "# stale: generated from npm-2.2.0\n"


def project_copy(root: Path) -> Path:
    """A temporary copy of the project as it was at npm-2.2.0: its pin file and a stale generated/."""
    (root / "schema").mkdir(parents=True)
    (root / "schema" / "pins.toml").write_bytes(PINS_2_2.read_bytes())
    generated = root / "generated" / "acp_v2_draft"
    shutil.copytree(
        project_root() / "generated" / "acp_v2_draft",
        generated,
        ignore=shutil.ignore_patterns("__pycache__", "*_cache"),
    )
    models = generated / "models.py"
    models.write_text(STALE_MARK + models.read_text(encoding="utf-8"), encoding="utf-8")
    (generated / "stale_module.py").write_text(STALE_MARK, encoding="utf-8")
    return root


def tree(directory: Path) -> dict[str, bytes]:
    """Every file below a directory (caches skipped): relative path -> bytes."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
        and not any(part.endswith("_cache") or part == "__pycache__" for part in p.parts)
    }


def published_registry(tmp_path: Path) -> FakeNpm:
    """A fake registry with the shared npm revisions published (what the `fake_npm` fixtures return)."""
    npm = FakeNpm(tmp_path / "registry")
    for version in ("1.8.0", "2.0.0", "2.1.0", "2.2.0", "2.4.0"):
        npm.publish(version, f"npm-{version}")
    return npm


@dataclass(frozen=True)
class Run:
    """What one `acp-codegen` subprocess run did."""

    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """For assertion messages."""
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_cli(*args: str | os.PathLike[str], env: dict[str, str], cwd: Path | None = None) -> Run:
    """Run `python -m acp_codegen ARGS` in `cwd` with `env` and capture the result."""
    full = {**env, "PYTHONPATH": str(project_root()), "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "acp_codegen", *map(str, args)],
        cwd=cwd or project_root(),
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)
