"""What the npm registry has: release lists asked through the `npm` client, and version order.

Owns `npm view <package> versions dist-tags --json` (the toolkit never speaks HTTP to the
registry itself; npm finds its registry, proxy and credentials on its own) and comparing npm
versions (semver: numeric core, pre-releases before their release, build metadata ignored).
Every failure is a one-line `registry-failed` diagnostic.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from acp_codegen.errors import fail
from acp_codegen.progress import step

NPM_VIEW_TIMEOUT_SECONDS = 120.0
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?")


@dataclass(frozen=True)
class Releases:
    """The published versions of one npm package and its dist-tags."""

    package: str
    versions: tuple[str, ...]
    dist_tags: tuple[tuple[str, str], ...]

    def newer_than(self, pinned: str, *, prereleases: bool = False) -> tuple[str, ...]:
        """Versions after `pinned`, oldest first (pre-releases only when asked or pinned to one)."""
        base = version_key(pinned)
        if base is None:
            return ()
        keep_pre = prereleases or is_prerelease(pinned)
        found = [v for v in self.versions if (k := version_key(v)) is not None and k > base]
        return tuple(sorted((v for v in found if keep_pre or not is_prerelease(v)), key=_sort_key))

    def has(self, version: str) -> bool:
        """Whether this exact version is published."""
        return version in self.versions


def version_key(
    version: str,
) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]] | None:
    """A sort key for a semver version (None when it is not one)."""
    match = _SEMVER.fullmatch(version)
    if match is None:
        return None
    major, minor, patch, pre = int(match[1]), int(match[2]), int(match[3]), match[4]
    if pre is None:
        return (major, minor, patch, 1, ())
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split("."))
    return (major, minor, patch, 0, parts)


def _sort_key(version: str) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
    key = version_key(version)
    assert key is not None
    return key


def is_prerelease(version: str) -> bool:
    """`2.5.0-beta.1` and the like."""
    match = _SEMVER.fullmatch(version)
    return match is not None and match[4] is not None


def npm_view(package: str) -> Releases:
    """Ask the registry (through `npm view`) for a package's versions and dist-tags."""
    npm = shutil.which("npm")
    if npm is None:
        raise fail(
            "registry-failed",
            f"cannot check {package}: the `npm` client is not on PATH",
            file=package,
        )
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
    command = [npm, "view", package, "versions", "dist-tags", "--json", "--loglevel=error"]
    try:
        with step(f"asking the npm registry for the releases of {package}"):
            done = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=NPM_VIEW_TIMEOUT_SECONDS,
                check=False,
            )
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise fail("registry-failed", f"`npm view {package}`: {exc}", file=package) from None
    if done.returncode != 0:
        raise fail(
            "registry-failed",
            f"`npm view {package}` failed (exit {done.returncode}): "
            f"{_reason(done.stdout, done.stderr)}",
            file=package,
        )
    return parse_view(package, done.stdout)


def parse_view(package: str, text: str) -> Releases:
    """Releases from `npm view <package> versions dist-tags --json` output."""
    try:
        data = json.loads(text)
    except ValueError:
        raise fail(
            "registry-failed", f"`npm view {package}` printed no JSON", file=package
        ) from None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        raise fail(
            "registry-failed",
            f"`npm view {package}`: {_error_summary(data['error'])}",
            file=package,
        )
    versions = data.get("versions") if isinstance(data, dict) else None
    if isinstance(versions, str):
        versions = [versions]  # npm prints a lone version as a string
    tags = data.get("dist-tags") if isinstance(data, dict) else None
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise fail("registry-failed", f"`npm view {package}` gave no version list", file=package)
    dist_tags = (
        tuple(sorted((str(k), str(v)) for k, v in tags.items())) if isinstance(tags, dict) else ()
    )
    return Releases(package, tuple(versions), dist_tags)


def _error_summary(error: dict[str, object]) -> str:
    summary = str(error.get("summary") or error.get("code") or "error").splitlines()
    return summary[0] if summary else "error"


def _reason(stdout: str, stderr: str) -> str:
    """The error npm reported: its JSON error summary, else the first informative stderr line."""
    try:
        data = json.loads(stdout)
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            return _error_summary(data["error"])
    except ValueError:
        pass
    lines = [
        line.removeprefix("npm error").removeprefix("npm ERR!").strip()
        for line in stderr.splitlines()
    ]
    lines = [line for line in lines if line]
    fallback = lines[0] if lines else "no error output"
    return next((line for line in lines if not line.startswith("code ")), fallback)
