"""The runtime library as this toolkit ships it: the versions generated packages accept, and the
files `--vendor-runtime` writes.

The toolkit depends on the acp-runtime of its own release (`pyproject.toml`), so what it
generates is made for that runtime: at least its version, below its next breaking release (the
next minor before 1.0, the next major after), which pip's `>=A,<B` spells and the generated
`__init__.py` checks at import (`acp_runtime.require`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import acp_runtime

RUNTIME_PACKAGE = "acp_runtime"
"""The import name of the runtime, and the directory `--vendor-runtime` writes."""

VENDORED_NOTE = "VENDORED.md"
"""The note written into a vendored copy (what it is, and how to move to the dependency)."""


def runtime_version() -> str:
    """The version of the runtime this toolkit ships."""
    return acp_runtime.__version__


def runtime_versions() -> str:
    """The runtime versions generated code works with, as pip writes them (`>=0.2.0,<0.3`)."""
    major, minor = (int(part) for part in runtime_version().split(".")[:2])
    below = f"{major + 1}" if major >= 1 else f"0.{minor + 1}"
    return f">={runtime_version()},<{below}"


@cache
def runtime_files() -> dict[str, str]:
    """Every file of the runtime package, by its path below the package (`jsonrpc/limits.py`),
    as this toolkit's runtime holds it, plus the vendoring note."""
    root = Path(acp_runtime.__file__).resolve().parent
    files = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and (path.suffix == ".py" or path.name == "py.typed")
        and "__pycache__" not in path.parts
    }
    files[VENDORED_NOTE] = _note()
    return files


def _note() -> str:
    versions = runtime_versions()
    return (
        f"# acp-runtime {runtime_version()}, vendored\n\n"
        "This directory is a copy of the `acp-runtime` package, written by `acp-codegen` with\n"
        "`--vendor-runtime` so that the bindings beside it work without installing it. "
        "Do not edit\n"
        "it: regenerate to update it.\n\n"
        "To depend on the published runtime instead (one `pip install -U` away from every fix):\n"
        "delete this directory, remove it from your packaging, and add the dependency\n"
        f"`acp-runtime{versions}` (the bindings are the same either way). A project that\n"
        "declares an `acp-conductor` script for this copy drops that line too: acp-runtime\n"
        "installs its own.\n"
    )
