"""The runtime library is written once, in `acp_codegen/runtime/`, and copied below the header."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_codegen.render.package import RUNTIME_MODULES
from acp_codegen.runtime import RUNTIME_DIR

GENERATED = Path(__file__).resolve().parents[1] / "generated"
PACKAGES = sorted(p.name for p in GENERATED.iterdir() if (p / "__init__.py").exists())


def test_every_runtime_module_is_copied() -> None:
    """Every `_*.py` of acp_codegen/runtime is part of a package, and nothing else is."""
    assert set(RUNTIME_MODULES) == {p.name for p in RUNTIME_DIR.glob("_*.py")} - {"__init__.py"}
    assert "_rpc_connection.py" in RUNTIME_MODULES and "_base.py" in RUNTIME_MODULES


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("module", RUNTIME_MODULES)
def test_generated_copy_is_byte_for_byte(package: str, module: str) -> None:
    """Below the provenance header, a package's runtime module is the source byte for byte."""
    written = (GENERATED / package / module).read_bytes()
    source = (RUNTIME_DIR / module).read_bytes()
    _, sep, body = written.partition(b"\n# Do not edit by hand")
    assert sep, f"{package}/{module} has no provenance header"
    assert body.split(b"\n", 1)[1] == source, f"{package}/{module} differs from acp_codegen/runtime/{module}"


def test_coverage_session_loads_the_runtime_from_its_source() -> None:
    """`nox -s coverage` (ACP_RUNTIME_IN_PLACE=1) measures acp_codegen/runtime/, not the copies."""
    code = (
        "import sys, runtime_in_place; runtime_in_place.install(); sys.path.insert(0, sys.argv[1]);"
        "import acp_v1, acp_v1._rpc as r; print(acp_v1._base.__file__); print(r.__file__);"
        "print(acp_v1.models.InitializeRequest.__mro__[1].__module__)"
    )
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{tests.parent}"}
    argv = [sys.executable, "-c", code, str(GENERATED)]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    base, rpc, module = done.stdout.split()
    assert Path(base) == RUNTIME_DIR / "_base.py" and Path(rpc) == RUNTIME_DIR / "_rpc.py"
    assert module == "acp_v1._base"


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("module", RUNTIME_MODULES)
def test_runtime_copy_is_black_stable(package: str, module: str) -> None:
    """The pipeline skips black for runtime modules: a copy (header + source) is black's output."""
    import black

    from acp_codegen.fmt import black_mode

    text = (GENERATED / package / module).read_text(encoding="utf-8")
    assert black.format_str(text, mode=black_mode()) == text, f"acp_codegen/runtime/{module} is not black-formatted"
