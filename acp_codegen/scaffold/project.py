"""What a scaffolded project is: its names, its files, the checks before writing, and the writing.

A project is the generated bindings of each protocol version it speaks, inside the project's own
package (`<package>.acp` for v2, `<package>.acp_v1` for v1), the runtime they import (vendored as
`acp_runtime/` beside the package by default, one copy for every version, or the `acp-runtime`
dependency), plus the files rendered from `templates/scaffold/`. Everything is rendered (and
formatted) before anything is written; every problem is a `CodegenError`.
"""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from acp_codegen import __version__
from acp_codegen.atomic import write_atomic
from acp_codegen.errors import fail
from acp_codegen.fmt import format_files
from acp_codegen.pins import pinned_source
from acp_codegen.render.package import environment
from acp_codegen.runtime_dist import RUNTIME_PACKAGE, runtime_files, runtime_versions
from acp_codegen.scaffold.bindings import PROTOCOLS, Bound, Kind, bind_versions, regenerate_command
from acp_codegen.upgrade.ci_install import InstallSource, default_install_source
from acp_codegen.write import write_package

__all__ = ["INSTALL_COMMAND", "PROTOCOLS", "TEST_COMMAND", "Kind", "scaffold"]

INSTALL_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e '.[test]'"
"""How a scaffolded project is installed (its README says so, and the tests run it)."""

TEST_COMMAND = ".venv/bin/pytest"
"""How a scaffolded project runs its own tests."""

# (output path, template): `{package}` stands for the project's package directory.
PROJECT_FILES: Mapping[Kind, tuple[tuple[str, str], ...]] = {
    "agent": (
        ("pyproject.toml", "scaffold/common/pyproject.toml.jinja"),
        (".gitignore", "scaffold/common/gitignore.jinja"),
        ("README.md", "scaffold/agent/README.md.jinja"),
        ("{package}/__init__.py", "scaffold/common/__init__.py.jinja"),
        ("{package}/__main__.py", "scaffold/common/__main__.py.jinja"),
        ("{package}/py.typed", "scaffold/common/py.typed.jinja"),
        ("{package}/agent.py", "scaffold/agent/agent.py.jinja"),
        ("{package}/echo.py", "scaffold/agent/echo.py.jinja"),
        ("{package}/agent_v1.py", "scaffold/agent/agent_v1.py.jinja"),
        ("{package}/agent_v2.py", "scaffold/agent/agent_v2.py.jinja"),
        ("tests/test_agent.py", "scaffold/agent/test_agent.py.jinja"),
        (".github/workflows/acp-codegen.yml", "scaffold/common/github-workflow.yml.jinja"),
        ("schema/pins.toml", "scaffold/common/pins.toml.jinja"),
        ("tests/test_agent_v1.py", "scaffold/agent/test_agent_v1.py.jinja"),
        ("tests/test_listen.py", "scaffold/agent/test_listen.py.jinja"),
    ),
    "client": (
        ("pyproject.toml", "scaffold/common/pyproject.toml.jinja"),
        (".gitignore", "scaffold/common/gitignore.jinja"),
        ("README.md", "scaffold/client/README.md.jinja"),
        ("{package}/__init__.py", "scaffold/common/__init__.py.jinja"),
        ("{package}/__main__.py", "scaffold/common/__main__.py.jinja"),
        ("{package}/py.typed", "scaffold/common/py.typed.jinja"),
        ("{package}/display.py", "scaffold/client/display.py.jinja"),
        ("{package}/client.py", "scaffold/client/client.py.jinja"),
        ("{package}/v1.py", "scaffold/client/v1.py.jinja"),
        ("tests/fake_agent.py", "scaffold/client/fake_agent.py.jinja"),
        ("tests/fake_agent_v1.py", "scaffold/client/fake_agent_v1.py.jinja"),
        ("tests/test_client.py", "scaffold/client/test_client.py.jinja"),
        (".github/workflows/acp-codegen.yml", "scaffold/common/github-workflow.yml.jinja"),
        ("schema/pins.toml", "scaffold/common/pins.toml.jinja"),
    ),
    "proxy": (
        ("pyproject.toml", "scaffold/common/pyproject.toml.jinja"),
        (".gitignore", "scaffold/common/gitignore.jinja"),
        ("README.md", "scaffold/proxy/README.md.jinja"),
        ("{package}/__init__.py", "scaffold/common/__init__.py.jinja"),
        ("{package}/__main__.py", "scaffold/common/__main__.py.jinja"),
        ("{package}/py.typed", "scaffold/common/py.typed.jinja"),
        ("{package}/proxy.py", "scaffold/proxy/proxy.py.jinja"),
        ("tests/echo_agent.py", "scaffold/proxy/echo_agent.py.jinja"),
        ("tests/test_proxy.py", "scaffold/proxy/test_proxy.py.jinja"),
        (".github/workflows/acp-codegen.yml", "scaffold/common/github-workflow.yml.jinja"),
        ("schema/pins.toml", "scaffold/common/pins.toml.jinja"),
    ),
}

# Files only a project speaking that protocol version has.
VERSION_FILES: Mapping[str, int] = {
    "{package}/agent_v1.py": 1,
    "{package}/v1.py": 1,
    "tests/fake_agent_v1.py": 1,
    "tests/fake_agent.py": 2,
    "tests/test_agent_v1.py": 1,
    "{package}/agent_v2.py": 2,
    "tests/test_agent.py": 2,
}

# Runtime dependencies of each kind besides the runtime (the bindings need pydantic only).
DEPENDENCIES: Mapping[Kind, tuple[str, ...]] = {
    "agent": ("pydantic>=2.11",),
    "client": ("pydantic>=2.11", "rich>=13.0"),
    "proxy": ("pydantic>=2.11",),
}

# What the runtime's remote transport needs when the runtime is vendored (the `remote` extra of
# acp-runtime, which tests/scaffold holds this to). The agent's `--listen` and the client's URL
# targets import it only when used.
REMOTE_DEPENDENCIES: tuple[str, ...] = (
    "uvicorn>=0.52.1",
    "hypercorn>=0.17",
    "websockets>=13.0",
    "httpx>=0.27",
)


def runtime_dependencies(vendored: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The project's dependencies and `remote` extra for the runtime: none and the transport's
    libraries when it is vendored, else `acp-runtime` itself and its `remote` extra."""
    if vendored:
        return (), REMOTE_DEPENDENCIES
    versions = runtime_versions()
    return (f"acp-runtime{versions}",), (f"acp-runtime[remote]{versions}",)


def runtime_packages() -> list[str]:
    """The import packages of a vendored runtime (what the project's packaging lists)."""
    return sorted(
        ".".join((RUNTIME_PACKAGE, *path.split("/")[:-1]))
        for path in runtime_files()
        if path.endswith("__init__.py")
    )


# The module holding `main()` (the console script) of each kind.
MAIN_MODULE: Mapping[Kind, str] = {"agent": "agent", "client": "client", "proxy": "proxy"}

_SEPARATORS = re.compile(r"[-_.\s]+")
_PACKAGE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
# Import names a project package must not take: it would shadow them for the project itself.
_TAKEN = frozenset(sys.stdlib_module_names) | {
    "pydantic",
    "pydantic_core",
    "rich",
    "pytest",
    "tests",
}


@dataclass(frozen=True)
class Names:
    """How a project is called: import package, distribution (and console script), title."""

    package: str
    dist: str
    title: str


@dataclass(frozen=True)
class Scaffolded:
    """What `scaffold` wrote."""

    kind: Kind
    directory: Path
    names: Names
    files: tuple[str, ...]
    source: str


def project_names(raw: str, *, origin: str) -> Names:
    """Normalise a project name (`My-Agent` -> `my_agent`); `bad-name` unless it makes a package."""
    package = _SEPARATORS.sub("_", raw.strip().lower()).strip("_")
    if not _PACKAGE.fullmatch(package):
        raise fail(
            "bad-name",
            f"{raw!r} is not usable as a project name: after normalisation ({package!r}) it must "
            "be a Python identifier of lowercase ASCII letters, digits and single underscores, "
            "starting with a letter (e.g. my_agent)",
            file=origin,
        )
    if keyword.iskeyword(package) or package in _TAKEN:
        raise fail(
            "bad-name",
            f"{raw!r} would be imported as {package!r}, which is a Python keyword or the name of a "
            "standard or required module; choose another name",
            file=origin,
        )
    title = " ".join(part.capitalize() for part in package.split("_"))
    return Names(package, package.replace("_", "-"), title)


def check_directory(directory: Path, *, force: bool) -> None:
    """Refuse a path that is not a directory, and a non-empty directory unless `force`."""
    if directory.exists() and not directory.is_dir():
        raise fail("not-a-directory", "exists and is not a directory", file=str(directory))
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise fail(
            "not-empty",
            "directory is not empty; pass --force to write the project into it anyway "
            "(files of the same name are replaced)",
            file=str(directory),
        )


def render_project(
    kind: Kind,
    names: Names,
    bound: tuple[Bound, ...],
    *,
    vendored: bool = True,
    install: InstallSource | None = None,
    root: Path | None = None,
) -> dict[str, str]:
    """The project's own files (everything but the bindings and the runtime): relative path -> text.

    `install`: where its CI workflow installs acp-codegen (default: where it came from here);
    `root`: the project's directory (local schema paths are pinned relative to it)."""
    root = root or Path.cwd()
    versions = tuple(b.version for b in bound if b.spoken)
    spoken = [b for b in bound if b.spoken]
    subpackages = [b.subpackage for b in bound]
    runtime, remote = runtime_dependencies(vendored)
    context = {
        "kind": kind,
        "package": names.package,
        "dist": names.dist,
        "title": names.title,
        "module": MAIN_MODULE[kind],
        "dependencies": (*runtime, *DEPENDENCIES[kind]),
        "remote_dependencies": remote,
        "vendored": vendored,
        "runtime_packages": runtime_packages() if vendored else [],
        "runtime_versions": runtime_versions(),
        "protocols": versions,
        "bindings": subpackages,
        "router": spoken[-1].subpackage,  # the newest version's bindings serve the router
        "sources": [(b.version, b.target.source, b.sha256) for b in bound],
        "generator_version": __version__,
        "install_command": INSTALL_COMMAND,
        "test_command": TEST_COMMAND,
        "regenerate_commands": [regenerate_command(b) for b in bound],
        # the drift workflow checks every version's bindings; `outdated` follows the newest (the
        # draft is what moves)
        "generate_check": " && ".join(f"{regenerate_command(b)} --check" for b in bound),
        "newest_source": bound[-1].target.source,
        "newest_sha256": bound[-1].sha256,
        # the pin file: (target name, package, source, sha256) per version, the newest last (the
        # default)
        "targets": [
            (
                b.subpackage,
                f"{names.package}.{b.subpackage}",
                pinned_source(b.target.source, root),
                b.sha256,
            )
            for b in bound
        ],
        "install": install or default_install_source(root),
    }
    env = environment()
    rendered = {
        path.format(package=names.package): env.get_template(template).render(context)
        for path, template in PROJECT_FILES[kind]
        if VERSION_FILES.get(path, versions[0]) in versions
    }
    return format_files(rendered)


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)  # the umask's mode (`mkstemp` alone made every file 0600)


def write_project(
    directory: Path,
    package: str,
    files: Mapping[str, str],
    bindings: Mapping[str, dict[str, str]],
    runtime: Mapping[str, str] | None = None,
) -> None:
    """Write the project files one by one (each atomically) and swap each bindings package, and the
    vendored runtime when given, in whole; on any failure, undo what was written (files restored
    or removed, new directories removed)."""
    packages = {directory / package / sub: dict(text) for sub, text in bindings.items()}
    if runtime is not None:
        packages[directory / RUNTIME_PACKAGE] = dict(runtime)
    paths = [directory / name for name in files] + list(packages)
    new_dirs = sorted(
        {p for path in paths for p in (path, *path.parents) if not p.exists()},
        key=lambda p: -len(p.parts),
    )
    undo: list[tuple[Path, bytes | None]] = []
    try:
        for name, text in files.items():
            path = directory / name
            undo.append((path, path.read_bytes() if path.is_file() else None))
            _write_text(path, text)
        for target, package_files in packages.items():
            write_package(package_files, target)
    except OSError as exc:
        _undo(undo, new_dirs)
        reason = exc.strerror or str(exc)
        raise fail(
            "write-failed", f"cannot write the project: {reason}", file=str(directory)
        ) from None
    except BaseException:
        _undo(undo, new_dirs)
        raise


def _undo(written: list[tuple[Path, bytes | None]], new_dirs: list[Path]) -> None:
    """Put back what `write_project` replaced, remove what it created (best effort)."""
    for path, old in reversed(written):
        try:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, old)  # the old bytes, in one step, with its mode
        except OSError:
            pass
    for new_dir in new_dirs:  # deepest first; only the empty ones (nothing of the user's)
        try:
            new_dir.rmdir()
        except OSError:
            pass


def scaffold(
    kind: Kind,
    directory: Path,
    *,
    name: str | None,
    schema: str | None,
    force: bool,
    pins_path: Path,
    protocols: tuple[int, ...] = PROTOCOLS,
    v1_schema: str | None = None,
    vendor_runtime: bool = True,
    ci_install: InstallSource | None = None,
) -> Scaffolded:
    """Create a new agent, client or proxy project in `directory`.

    Nothing is written unless every check and render succeeds.

    `vendor_runtime`: write one copy of the runtime beside the package (the default while
    acp-runtime is on no package index, so that the project installs offline) instead of
    depending on `acp-runtime`. `ci_install`: where the project's CI workflow installs acp-codegen
    (default: where it came from here).
    """
    names = project_names(
        name if name is not None else directory.resolve().name,
        origin="--name" if name is not None else "DIR",
    )
    check_directory(directory, force=force)
    bound = bind_versions(kind, names.package, protocols, schema, v1_schema, pins_path)
    files = render_project(
        kind, names, bound, vendored=vendor_runtime, install=ci_install, root=directory
    )
    runtime = runtime_files() if vendor_runtime else None
    write_project(directory, names.package, files, {b.subpackage: b.files for b in bound}, runtime)
    listed = sorted(
        [
            *files,
            *(f"{names.package}/{b.subpackage}/{n}" for b in bound for n in b.files),
            *(f"{RUNTIME_PACKAGE}/{n}" for n in runtime or ()),
        ]
    )
    return Scaffolded(
        kind, directory, names, tuple(listed), ", ".join(b.target.source for b in bound)
    )
