"""Schema sources: source specs (path, url, npm, github) and fetching their bytes.

Pinned remote sources are looked up in the cache, then in the shared directory, then on the
network; whatever is used is checked against the pinned sha256 before it is cached or returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal
from urllib.parse import quote

from acp_codegen.atomic import write_atomic
from acp_codegen.download import extract, http_get, npm_pack
from acp_codegen.errors import CodegenError, Diagnostic, fail

if TYPE_CHECKING:
    from acp_codegen.pins import Pin

Origin = Literal["local", "cache", "shared", "network"]


_NAME = r"[A-Za-z0-9_~][A-Za-z0-9._~-]*"
_NPM = re.compile(rf"npm:(?P<package>(?:@{_NAME}/)?{_NAME})@(?P<version>[^\s#@/]+)#(?P<path>.+)")
_GITHUB = re.compile(
    r"github:(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)@(?P<commit>[^\s#@]+)#(?P<path>.+)"
)


@dataclass(frozen=True)
class PathSource:
    """A local file; a relative path is relative to the current directory."""

    kind: ClassVar[str] = "path"
    text: str
    path: Path


@dataclass(frozen=True)
class UrlSource:
    """A plain http(s) URL."""

    kind: ClassVar[str] = "url"
    text: str
    url: str


@dataclass(frozen=True)
class NpmSource:
    """A file inside a published npm package: `npm:<package>@<version>#<path>`."""

    kind: ClassVar[str] = "npm"
    text: str
    package: str
    version: str
    path: str


@dataclass(frozen=True)
class GithubSource:
    """A file of a GitHub repository at a commit: `github:<owner>/<repo>@<commit>#<path>`."""

    kind: ClassVar[str] = "github"
    text: str
    owner: str
    repo: str
    commit: str
    path: str

    @property
    def url(self) -> str:
        """The raw.githubusercontent.com URL of the file."""
        base = "https://raw.githubusercontent.com"
        return f"{base}/{self.owner}/{self.repo}/{self.commit}/{self.path}"


SourceSpec = PathSource | UrlSource | NpmSource | GithubSource


@dataclass(frozen=True)
class Fetched:
    """The bytes of a source, their sha256, and where they came from."""

    data: bytes
    sha256: str
    source: str
    label: str
    origin: Origin


def parse_source(text: str) -> SourceSpec:
    """Parse a source spec; malformed npm: and github: specs raise `bad-source`."""
    if text.startswith("npm:"):
        match = _NPM.fullmatch(text)
        if match is None or not _is_inner_path(match["path"]):
            raise fail(
                "bad-source",
                f"malformed npm source {text!r}: expected "
                "npm:<package>@<version>#<path inside the package>",
                file=text,
            )
        return NpmSource(text, match["package"], match["version"], match["path"])
    if text.startswith("github:"):
        match = _GITHUB.fullmatch(text)
        if match is None or not _is_inner_path(match["path"]):
            raise fail(
                "bad-source",
                f"malformed github source {text!r}: expected "
                "github:<owner>/<repo>@<commit>#<path inside the repository>",
                file=text,
            )
        return GithubSource(text, match["owner"], match["repo"], match["commit"], match["path"])
    if text.startswith(("http://", "https://")):
        return UrlSource(text, text)
    if text.startswith("pin:"):
        raise fail(
            "bad-source",
            f"{text!r} names a pinned target, not a source: give npm:..., github:..., "
            f"a URL or a path (./{text} for a file of that name)",
            file=text,
        )
    if not text:
        raise fail("bad-source", "empty source spec")
    return PathSource(text, Path(text))


def project_root() -> Path:
    """The project's root directory (the one holding `acp_codegen/` and `schema/`)."""
    return Path(__file__).resolve().parent.parent


def user_project_pins(start: Path | None = None) -> Path | None:
    """`schema/pins.toml` of the nearest directory from `start` (default: the current one) upward.

    None if there is none.
    """
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "schema" / "pins.toml"
        if candidate.is_file():
            return candidate
    return None


def default_cache_dir() -> Path:
    """The schema cache directory.

    `$ACP_CODEGEN_CACHE`, else `.cache/acp-codegen` in the current project, the toolkit's checkout
    or `~/.cache`.
    """
    env = os.environ.get("ACP_CODEGEN_CACHE")
    if env:
        return Path(env)
    pins = user_project_pins()
    if pins is None and (project_root() / "schema" / "pins.toml").is_file():
        pins = project_root() / "schema" / "pins.toml"
    if pins is not None:
        return pins.parent.parent / ".cache" / "acp-codegen"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "acp-codegen"


def default_shared_dir() -> Path:
    """`$ACP_CODEGEN_SHARED`, else `<project root>/../shared/schemas/acp` (may not exist)."""
    env = os.environ.get("ACP_CODEGEN_SHARED")
    return Path(env) if env else project_root().parent / "shared" / "schemas" / "acp"


def fetch(
    spec: SourceSpec,
    *,
    expected_sha256: str | None,
    cache_dir: Path,
    shared_dir: Path | None,
    offline: bool = False,
) -> Fetched:
    """Get a source's bytes (cache, shared directory, then network) and verify their sha256."""
    expected = expected_sha256.lower() if expected_sha256 else None
    if isinstance(spec, PathSource):
        return _verified(spec, _read_local(spec), expected, "local")
    if expected is not None:
        cached = _read_matching(cache_dir / expected, expected)
        if cached is not None:
            return Fetched(cached, expected, spec.text, spec.text, "cache")
        found = _find_shared(shared_dir, expected) if shared_dir is not None else None
        if found is not None:
            return _store(cache_dir, _verified(spec, found.read_bytes(), expected, "shared"))
    if isinstance(spec, NpmSource):
        return _fetch_npm(spec, expected, cache_dir, offline)
    if offline:
        raise fail(
            "fetch-failed",
            "offline, and the source is in neither the cache nor the " "shared directory",
            file=spec.text,
        )
    return _store(cache_dir, _verified(spec, http_get(spec.url, spec.text), expected, "network"))


def pull(
    pins: Iterable[Pin],
    cache_dir: Path,
    shared_dir: Path | None,
    *,
    include_history: bool = False,
    offline: bool = False,
) -> list[Fetched]:
    """Fetch and verify every pinned source (optionally history too); report all failures."""
    wanted: list[tuple[str, str]] = []
    for pin in pins:
        wanted.append((pin.source, pin.sha256))
        if include_history:
            wanted.extend((old.source, old.sha256) for old in pin.history)
    results: list[Fetched] = []
    problems: list[Diagnostic] = []
    for source, sha256 in dict.fromkeys(wanted):
        try:
            spec = parse_source(source)
            results.append(
                fetch(
                    spec,
                    expected_sha256=sha256,
                    cache_dir=cache_dir,
                    shared_dir=shared_dir,
                    offline=offline,
                )
            )
        except CodegenError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise CodegenError(*problems)
    return results


def _is_inner_path(path: str) -> bool:
    """A relative path that stays inside its package or repository."""
    parts = path.split("/")
    return not path.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _verified(spec: SourceSpec, data: bytes, expected: str | None, origin: Origin) -> Fetched:
    """Wrap fetched bytes, raising `sha256-mismatch` when they are not the pinned ones."""
    actual = _sha256(data)
    if expected is not None and actual != expected:
        raise fail(
            "sha256-mismatch",
            f"expected sha256 {expected}, got {actual} (read from {origin})",
            file=spec.text,
        )
    return Fetched(data, actual, spec.text, spec.text, origin)


def _read_local(spec: PathSource) -> bytes:
    try:
        return spec.path.read_bytes()
    except FileNotFoundError:
        raise fail("file-not-found", "no such file", file=spec.text) from None
    except OSError as exc:
        raise fail("fetch-failed", f"cannot read: {exc.strerror or exc}", file=spec.text) from None


def _read_matching(path: Path, expected: str) -> bytes | None:
    """The file's bytes if it exists and hashes to `expected`."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if _sha256(data) == expected else None


def _find_shared(shared_dir: Path, expected: str) -> Path | None:
    """A file of the shared directory claimed (by manifest.json) or found to have that sha256."""
    if not shared_dir.is_dir():
        return None
    manifest = shared_dir / "manifest.json"
    index = _manifest_index(shared_dir, manifest) if manifest.is_file() else None
    if index is not None:
        path = index.get(expected)
        if path is not None and path.is_file():
            return path
    # a file the manifest does not list (say, a v1 unstable schema copied beside its revision's
    # other files) is found by its bytes
    for path in sorted(shared_dir.rglob("*.json")):
        if path != manifest and _read_matching(path, expected) is not None:
            return path
    return None


def _manifest_index(shared_dir: Path, manifest: Path) -> dict[str, Path] | None:
    """sha256 -> file from `{"revisions": [{"id", "files": {name: sha256}}]}`; None if unusable."""
    try:
        revisions = json.loads(manifest.read_bytes())["revisions"]
        index = {
            str(sha256).lower(): shared_dir / str(revision["id"]) / str(name)
            for revision in revisions
            for name, sha256 in revision["files"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return index


def _store(cache_dir: Path, fetched: Fetched, *extra: tuple[Path, bytes]) -> Fetched:
    """Best-effort cache write of verified bytes (as `<sha256>`) and any extra files."""
    for path, data in ((cache_dir / fetched.sha256, fetched.data), *extra):
        try:
            _write_atomic(path, data)
        except OSError:
            pass  # a read-only or full cache must not fail a fetch that succeeded
    return fetched


def _write_atomic(path: Path, data: bytes) -> None:
    write_atomic(path, data)  # cached files get the umask's mode too (not mkstemp's 0600)


def _fetch_npm(spec: NpmSource, expected: str | None, cache_dir: Path, offline: bool) -> Fetched:
    """Read the file out of the package tarball, cached by package@version."""
    tarball = cache_dir / "npm" / (quote(f"{spec.package}@{spec.version}", safe="@") + ".tgz")
    try:
        blob = tarball.read_bytes()
    except OSError:
        if offline:
            raise fail(
                "fetch-failed",
                f"offline, and {spec.package}@{spec.version} is not in " "the cache",
                file=spec.text,
            ) from None
        blob = npm_pack(spec)
        fetched = _verified(spec, extract(blob, spec), expected, "network")
        return _store(cache_dir, fetched, (tarball, blob))
    return _store(cache_dir, _verified(spec, extract(blob, spec), expected, "cache"))
