"""acp-codegen: Python bindings generated from the Agent Client Protocol JSON Schema.

The library API (docs/library.md) is importable from here: `generate`, `compare`,
`compare_history`, `scaffold_project`, `track`, `find_outdated`, `upgrade_target`,
`migrate_code`, and the error they raise, `CodegenError`. They are loaded at first use (PEP 562),
so `import acp_codegen` and the CLI's start stay cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:  # what type checkers see (the `as` re-exports them); at run time `__getattr__`
    from acp_codegen.api import Generation as Generation
    from acp_codegen.api import compare as compare
    from acp_codegen.api import compare_history as compare_history
    from acp_codegen.api import find_outdated as find_outdated
    from acp_codegen.api import generate as generate
    from acp_codegen.api import migrate_code as migrate_code
    from acp_codegen.api import scaffold_project as scaffold_project
    from acp_codegen.api import track as track
    from acp_codegen.api import upgrade_target as upgrade_target
    from acp_codegen.errors import CodegenError as CodegenError
    from acp_codegen.errors import Diagnostic as Diagnostic

_API = frozenset(
    {
        "Generation",
        "compare",
        "compare_history",
        "find_outdated",
        "generate",
        "migrate_code",
        "scaffold_project",
        "track",
        "upgrade_target",
    }
)
_ERRORS = frozenset({"CodegenError", "Diagnostic"})

__all__ = [
    "CodegenError",
    "Diagnostic",
    "Generation",
    "__version__",
    "compare",
    "compare_history",
    "find_outdated",
    "generate",
    "migrate_code",
    "scaffold_project",
    "track",
    "upgrade_target",
]


def __getattr__(name: str) -> Any:
    """The library API's names, imported at first use."""
    if name in _API:
        from acp_codegen import api

        return getattr(api, name)
    if name in _ERRORS:
        from acp_codegen import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'acp_codegen' has no attribute {name!r}")
