"""acp-runtime as a library: its layout by sub-package, the contract generated code imports, the
version check at import, and one runtime per process."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import acp_runtime
import pytest
from acp_runtime import RuntimeVersionError, bindings, require
from cli_support import GENERATED

RUNTIME = Path(acp_runtime.__file__).resolve().parent
SUBPACKAGES = sorted(p.parent.name for p in RUNTIME.glob("*/__init__.py"))


def _modules() -> list[Path]:
    return sorted(p for p in RUNTIME.rglob("*.py") if "__pycache__" not in p.parts)


def _subpackage(path: Path) -> str | None:
    parts = path.relative_to(RUNTIME).parts
    return parts[0] if len(parts) > 1 else None


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(absolute module, names) of every `from X import names` of a runtime module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("acp_runtime", *path.relative_to(RUNTIME).parts[:-1]))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((module, [a.name for a in node.names]))
    return found


def test_the_runtime_is_cut_into_the_documented_sub_packages() -> None:
    assert SUBPACKAGES == [
        "jsonrpc",
        "lifecycle",
        "models",
        "peers",
        "proxies",
        "remote",
        "versions",
    ]
    for name in SUBPACKAGES:
        module = __import__(f"acp_runtime.{name}", fromlist=["__all__"])
        assert module.__doc__ and module.__all__, name
        for exported in module.__all__:
            assert hasattr(module, exported), f"acp_runtime.{name}.{exported}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(RUNTIME)))
def test_no_private_name_crosses_a_sub_package(path: Path) -> None:
    """Across sub-packages, a module imports the other sub-package itself (what it exposes),
    never one of its modules or a `_`-prefixed name."""
    own = _subpackage(path)
    for module, names in _imports(path):
        if not module.startswith("acp_runtime."):
            continue
        target = module.split(".")[1]
        if target == own or target not in SUBPACKAGES:
            continue
        assert (
            module == f"acp_runtime.{target}"
        ), f"{path.name} imports {module}: import acp_runtime.{target}"
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{path.name} imports private {private} from acp_runtime.{target}"
        exposed = __import__(module, fromlist=["__all__"]).__all__
        assert set(names) <= set(
            exposed
        ), f"{path.name}: {set(names) - set(exposed)} not in {module}.__all__"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(RUNTIME)))
def test_every_module_says_what_it_owns(path: Path) -> None:
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), path


def test_the_contract_lists_what_type_checkers_see_and_every_name_exists() -> None:
    tree = ast.parse(Path(bindings.__file__).read_text(encoding="utf-8"))
    checked = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    seen = {}
    for node in checked.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: an explicit re-export (`X as X`)"
            seen[alias.name] = node.module
    assert seen == bindings._SOURCE_OF
    for name in bindings.__all__:
        assert getattr(bindings, name) is getattr(
            __import__(f"acp_runtime.{seen[name]}", fromlist=[name]), name
        )


def test_generated_code_imports_the_runtime_through_the_contract_only() -> None:
    packages = sorted(p for p in GENERATED.iterdir() if (p / "__init__.py").is_file())
    assert packages
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else [a.name for a in node.names] if isinstance(node, ast.Import) else []
                )
                for name in names:
                    if name.startswith("acp_runtime"):
                        assert name in (
                            "acp_runtime",
                            "acp_runtime.bindings",
                        ), f"{path}: imports {name}"
            text = path.read_text(encoding="utf-8")
            assert "class Connection" not in text and "class AcpModel" not in text, path


def _python(code: str, path: list[Path], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )


def test_importing_the_runtime_or_its_contract_loads_no_sub_package(tmp_path: Path) -> None:
    code = (
        "import sys, acp_runtime, acp_runtime.bindings;"
        "print(sorted(m for m in sys.modules if m.startswith('acp_runtime')))"
    )
    done = _python(code, [], tmp_path)
    assert done.stdout.strip() == "['acp_runtime', 'acp_runtime.bindings']", done.stderr


def test_require_accepts_the_range_and_names_both_versions_and_the_fix() -> None:
    require("pkg", f">={acp_runtime.__version__},<99")
    with pytest.raises(RuntimeVersionError) as refused:
        require("my_bindings", ">=99.0.0,<100")
    message = str(refused.value)
    assert "\n" not in message
    assert "my_bindings needs acp-runtime >=99.0.0,<100" in message
    assert f"acp-runtime {acp_runtime.__version__} is installed" in message
    assert "pip install 'acp-runtime>=99.0.0,<100'" in message
    with pytest.raises(RuntimeVersionError):
        require("pkg", f">=0.0.1,<{acp_runtime.__version__}")
    with pytest.raises(ValueError, match="unsupported"):
        require("pkg", "~=1.0")


def _runtime_copy(tmp_path: Path, version: str) -> Path:
    """A copy of the installed runtime that says it is `version`."""
    root = tmp_path / "runtime-copy"
    for source in RUNTIME.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        target = root / "acp_runtime" / source.relative_to(RUNTIME)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        if source == RUNTIME / "__init__.py":
            text = text.replace(
                f'__version__ = "{acp_runtime.__version__}"', f'__version__ = "{version}"'
            )
            assert version in text
        target.write_text(text, encoding="utf-8")
    return root


def test_a_generated_package_refuses_an_incompatible_runtime_in_one_line(tmp_path: Path) -> None:
    old = _runtime_copy(tmp_path, "0.1.0")
    done = _python("import acp_v2_draft", [old, GENERATED], tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("acp_runtime.RuntimeVersionError: acp_v2_draft needs acp-runtime >=")
    assert "but acp-runtime 0.1.0 is installed: run `pip install 'acp-runtime>=" in last
    compatible = _runtime_copy(tmp_path / "ok", acp_runtime.__version__)
    assert (
        _python(
            "import acp_v2_draft; acp_v2_draft.AcpModel", [compatible, GENERATED], tmp_path
        ).returncode
        == 0
    )


def test_a_generated_package_without_its_runtime_says_what_to_install(tmp_path: Path) -> None:
    absent = tmp_path / "absent" / "acp_runtime"
    absent.mkdir(parents=True)  # shadows the installed runtime as if it were not there
    (absent / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'acp_runtime'\", name='acp_runtime')\n"
    )
    done = _python("import acp_v1", [absent.parent, GENERATED], tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: acp_v1 needs acp-runtime >="), done.stderr
    assert "which is not installed: run `pip install 'acp-runtime>=" in last


def test_one_process_one_runtime(tmp_path: Path) -> None:
    code = (
        "import acp_v1, acp_v2, acp_v2_draft as d\n"
        "assert acp_v1.RpcError is d.RpcError is acp_v2.RpcError\n"
        "assert acp_v1.AcpModel is d.AcpModel and acp_v1.Connection is d.Connection\n"
        "assert acp_v1.VersionRouter is d.VersionRouter and acp_v1.Negotiated is d.Negotiated\n"
        "assert issubclass(acp_v1.AgentPeer, d.AgentPeer.__mro__[1])\n"
        "print('ok')\n"
    )
    done = _python(code, [GENERATED], tmp_path)
    assert done.stdout.strip() == "ok", done.stderr
