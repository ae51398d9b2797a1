"""The runtime library of the generated packages: real modules, linted, type-checked and tested here.

Every ``_*.py`` module of this package is copied byte for byte, below the provenance header, into
each generated package (`acp_codegen.render.package.RUNTIME_MODULES`); nothing in them varies with the
schema. They import each other relatively and otherwise depend on pydantic and the standard
library only, so a generated package (and a scaffolded project's bindings) stays self-contained.

Decision: each output package carries its own copy, even when several are generated into one
directory. A shared runtime package would make ``acp_v1`` importable only next to it and break the
scaffolded projects' single-directory bindings; the copies are identical but for the header, and
code that must work across packages (the version router) relies only on their common interface.
"""

from __future__ import annotations

from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent


def runtime_module_names() -> tuple[str, ...]:
    """The file names of the modules copied into every generated package, in name order."""
    return tuple(sorted(p.name for p in RUNTIME_DIR.glob("_*.py") if p.name != "__init__.py"))


def runtime_module_text(name: str) -> str:
    """The text of one runtime module as it is written below the generated header."""
    return (RUNTIME_DIR / name).read_text(encoding="utf-8")
