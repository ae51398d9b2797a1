"""Where a generated CI workflow installs the toolkit from, and the pip commands that do it.

The toolkit depends on the runtime of its own release (`acp-runtime==<version>`), so wherever
acp-codegen comes from, acp-runtime must come from there too, and first: a git URL or a checkout
holds it in `runtime/`, a directory of wheels holds both wheels. `--install-from` takes

- `index` (this toolkit's version) or a version (`0.2.0`): both from the package index;
- a git URL as pip spells it (`git+https://host/owner/repo@ref`, `git+ssh://...`);
- a path inside the project, relative to its root: a checkout of this repository (it has
  `runtime/pyproject.toml`), or a directory of the two wheels (`pip wheel ./runtime .`).

Without it, the workflow installs the toolkit the way it was installed here, as pip recorded it
(PEP 610 `direct_url.json`): from its git URL and commit; from its checkout when that lies inside
the project; from the git remote and commit of a checkout outside it; from the index when it
came from an index. When none of these can work in CI, the index is written with a warning.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from acp_codegen import __version__
from acp_codegen.errors import CodegenError, fail

Kind = Literal["index", "git", "checkout", "wheels"]
_VERSION = re.compile(r"\d+(\.\d+)*([-.+]?[0-9A-Za-z.]+)?")
_SCP_LIKE = re.compile(r"(?P<user>[^@/]+)@(?P<host>[^:/]+):(?P<path>.+)")


@dataclass(frozen=True)
class InstallSource:
    """Where CI installs acp-runtime and acp-codegen from."""

    kind: Kind
    location: str
    """The version, the git URL (with its ref), or the path relative to the project root."""
    warnings: tuple[str, ...] = field(default=())

    @property
    def commands(self) -> tuple[str, str]:
        """The two pip commands, the runtime's first (shell words, quoted)."""
        pip = "python -m pip install"
        if self.kind == "index":
            return (
                f"{pip} {shlex.quote(f'acp-runtime=={self.location}')}",
                f"{pip} {shlex.quote(f'acp-codegen=={self.location}')}",
            )
        if self.kind == "git":
            url, _, fragment = self.location.partition("#")
            parts = dict(part.partition("=")[::2] for part in fragment.split("&") if part)
            below = parts.get("subdirectory", "").strip("/")
            parts["subdirectory"] = f"{below}/runtime" if below else "runtime"
            runtime = f"{url}#" + "&".join(f"{k}={v}" for k, v in parts.items())
            return (
                f"{pip} {shlex.quote(f'acp-runtime @ {runtime}')}",
                f"{pip} {shlex.quote(f'acp-codegen @ {self.location}')}",
            )
        path = self.location.rstrip("/") or "."
        if self.kind == "checkout":
            return f"{pip} {shlex.quote(f'./{path}/runtime')}", f"{pip} {shlex.quote(f'./{path}')}"
        # the wheels there; their dependencies from the index
        links = f"--find-links {shlex.quote(f'./{path}')}"
        return (
            f"{pip} {links} {shlex.quote(f'acp-runtime=={__version__}')}",
            f"{pip} {links} {shlex.quote(f'acp-codegen=={__version__}')}",
        )

    def describe(self) -> str:
        """One line for the workflow's comment."""
        return {
            "index": "the package index, version",
            "git": "git",
            "checkout": "the checkout at",
            "wheels": "the wheels in",
        }[self.kind] + f" {self.location}"


def parse_install_from(text: str, project_root: Path) -> InstallSource:
    """What `--install-from` names (see the module); a path is checked against the project."""
    if text == "index":
        return InstallSource("index", __version__)
    if text.startswith("git+"):
        return InstallSource("git", text)
    if _VERSION.fullmatch(text):
        return InstallSource("index", text.lstrip("="))
    # lexically, not `resolve()`d: a symlink inside the project is a path CI checks out
    directory = Path(os.path.abspath(project_root / text))
    try:
        relative = directory.relative_to(os.path.abspath(project_root)).as_posix()
    except ValueError:
        raise fail(
            "bad-option",
            f"{text} is outside the project {project_root}: CI checks out only the project "
            "(give a git URL, a version, or a path inside it)",
            file="--install-from",
        ) from None
    return _local(directory, relative, text)


def _local(directory: Path, relative: str, shown: str) -> InstallSource:
    if (directory / "runtime" / "pyproject.toml").is_file() and (
        directory / "pyproject.toml"
    ).is_file():
        return InstallSource("checkout", relative)
    names = {p.name.split("-")[0] for p in directory.glob("*.whl")} if directory.is_dir() else set()
    if {"acp_runtime", "acp_codegen"} <= names:
        return InstallSource("wheels", relative)
    raise fail(
        "bad-option",
        f"{shown} is neither a checkout of acp-codegen (with runtime/) nor a directory holding "
        "the acp_runtime and acp_codegen wheels",
        file="--install-from",
    )


def default_install_source(project_root: Path) -> InstallSource:
    """How this toolkit was installed, as a source CI can install from (see the module)."""
    try:
        raw = metadata.distribution("acp-codegen").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        raw = None
    direct: dict[str, Any] = json.loads(raw) if raw else {}
    return install_source_for(direct, project_root)


def install_source_for(direct_url: dict[str, Any], project_root: Path) -> InstallSource:
    """The install source for a toolkit pip recorded as `direct_url` (PEP 610; `{}`: installed by
    name from an index), in a project rooted at `project_root`."""
    url = str(direct_url.get("url", ""))
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        ref = vcs.get("commit_id") or vcs.get("requested_revision")
        return InstallSource("git", f"git+{url}" + (f"@{ref}" if ref else ""))
    if not url.startswith("file://"):
        if url:
            return _index_because(
                f"acp-codegen was installed from {url}, which CI cannot be told to use"
            )
        return InstallSource("index", __version__)
    path = Path(unquote(urlparse(url).path))
    directory = path.parent if path.suffix == ".whl" else path
    try:
        relative = directory.resolve().relative_to(project_root.resolve()).as_posix()
    except ValueError:
        relative = None
    if relative is not None:
        try:
            return _local(directory, relative or ".", str(directory))
        except CodegenError:
            pass  # not usable as it is: a remote may be
    remote = _git_remote(directory)
    if remote is not None:
        return InstallSource("git", remote)
    return _index_because(
        f"acp-codegen was installed from {directory}, outside this project and with no git "
        "remote to fetch it from"
    )


def _index_because(reason: str) -> InstallSource:
    warning = (
        f"{reason}: the workflow installs acp-codegen=={__version__} from the package index; if "
        "the index has no such release, pass --install-from (a git URL, or a checkout or wheels "
        "inside the project)"
    )
    return InstallSource("index", __version__, (warning,))


def _git_remote(directory: Path) -> str | None:
    """`git+<origin URL>@<HEAD commit>` of a checkout, or None."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(directory), *args],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None

    remote, commit = git("remote", "get-url", "origin"), git("rev-parse", "HEAD")
    if remote is None or commit is None:
        return None
    scp = _SCP_LIKE.fullmatch(remote)
    if "://" not in remote:
        if scp is None:
            return None  # a path on this machine: CI cannot fetch it
        remote = f"ssh://{scp['user']}@{scp['host']}/{scp['path']}"
    elif remote.startswith("file://"):
        return None
    return f"git+{remote}@{commit}"
