"""The model stage: the model modules as the IR decides them (`acp_codegen.ir.modules`), their
imports, order and shared descriptions, and the format stage (`acp_codegen.fmt`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_codegen.errors import CodegenError
from acp_codegen.ir.nodes import Protocol, Struct
from acp_codegen.pins import PinFile


@pytest.fixture(scope="module")
def draft_ir(pinned_sources: PinFile) -> Protocol:
    from acp_codegen.pipeline import ir_for

    target = pinned_sources.default_pin
    return ir_for(target.source, target.sha256)


def _rendered(protocol: Protocol) -> dict[str, str]:
    from acp_codegen.render.package import render_package

    return render_package(protocol, "acp_v2_draft", "acp-codegen generate acp_v2_draft")


def test_every_definition_is_defined_once_with_every_field(draft_ir: Protocol) -> None:
    files = _rendered(draft_ir)
    defined: dict[str, str] = {}
    for path, text in files.items():
        if path.startswith("_models/") and path.endswith(".py"):
            for node in ast.parse(text).body:
                name = (
                    node.name
                    if isinstance(node, ast.ClassDef)
                    else getattr(getattr(node, "target", None), "id", None)
                )
                if name is not None and not name.startswith("_"):
                    assert name not in defined, f"{name} in {path} and {defined[name]}"
                    defined[name] = path
    from acp_codegen.ir.nodes import Enum

    assert set(defined) == {d.name for d in draft_ir.definitions if not isinstance(d, Enum)}
    for d in draft_ir.definitions:
        if isinstance(d, Struct):
            text = files[defined[d.name]]
            for f in d.fields:
                assert f"\n    {f.py_name}: " in text, (d.name, f.py_name)


def test_each_model_module_defines_what_it_is_evaluated_from_first(draft_ir: Protocol) -> None:
    """The order is the IR's: a base class, and what an alias is evaluated from, come first in a
    module (or are imported from another module)."""
    from acp_codegen.ir.order import eager_deps

    files = _rendered(draft_ir)
    by_name = {d.name: d for d in draft_ir.definitions}
    checked = 0
    for path, text in files.items():
        if not path.startswith("_models/") or path.endswith("__init__.py"):
            continue
        position: dict[str, int] = {}
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                position[node.name] = len(position)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in by_name
            ):
                position[node.target.id] = len(position)
        for name, index in position.items():
            for dep in eager_deps(by_name[name]):
                if dep in position:
                    assert position[dep] < index, f"{path}: {name} before {dep}"
                    checked += 1
    assert checked > 50


def test_a_description_many_fields_share_is_documented_once(draft_ir: Protocol) -> None:
    """ACP gives `_meta` the same five lines on most classes: the facade documents it once, the
    fields that carry it have no docstring of their own, the others keep theirs."""
    from acp_codegen.ir.modules import SHARED_DOC_MIN, models_of

    models = models_of(draft_ir)
    shared = {doc.wire_name: doc.description for doc in models.shared_docs}
    assert "_meta" in shared
    counts = {}
    for d in draft_ir.definitions:
        for f in d.fields if isinstance(d, Struct) else ():
            if f.description is not None and shared.get(f.wire_name) == f.description:
                counts[f.wire_name] = counts.get(f.wire_name, 0) + 1
    assert all(n >= SHARED_DOC_MIN for n in counts.values())
    fields = {
        (c.name, f.name): f.doc
        for m in models.modules
        for c in m.definitions
        if c.kind == "class"
        for f in c.fields
    }
    metas = [
        (d.name, f)
        for d in draft_ir.definitions
        if isinstance(d, Struct)
        for f in d.fields
        if f.wire_name == "_meta"
    ]
    own = [
        fields[d, f.py_name] for d, f in metas if f.description and f.description != shared["_meta"]
    ]
    assert own and all(own)  # a different description stays on its field
    assert all(fields[d, f.py_name] is None for d, f in metas if f.description == shared["_meta"])
    facade = _rendered(draft_ir)["models.py"]
    assert "- `meta` (`_meta` on the wire): The _meta property is reserved by ACP" in facade


def test_each_module_imports_exactly_what_it_uses(generated_dir: Path) -> None:
    """ruff finds no unused import and no unsorted import block in any generated module (the
    committed packages and the small cases' expected output)."""
    from ruff.__main__ import find_ruff_bin

    done = subprocess.run(
        [
            find_ruff_bin(),
            "check",
            "--isolated",
            "--line-length=100",
            "--select=F401,I",
            "--output-format=concise",
            str(generated_dir),
            str(Path(__file__).resolve().parent / "generator" / "cases"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_formatter_failure_names_the_file() -> None:
    from acp_codegen.fmt import format_files

    assert format_files({"ok.py": "x  =  1\n", "data.txt": "  as is"}) == {
        "ok.py": "x = 1\n",
        "data.txt": "  as is",
    }
    with pytest.raises(CodegenError) as caught:
        format_files({"ok.py": "x = 1\n", "pkg/bad.py": "def broken(:\n"})
    rendered = caught.value.diagnostics[0].render()
    assert rendered.startswith("error[format-failed] pkg/bad.py: ") and "\n" not in rendered


def test_reserved_class_names_cover_every_name_the_package_already_uses(
    generated_dir: Path,
) -> None:
    """What the model modules and enums.py import (but the names of other model groups), and what
    the other modules export from the package root."""
    from acp_codegen.ir.naming import RESERVED_CLASS_NAMES

    for package in ("acp_v2_draft", "acp_v2", "acp_v1"):
        used: set[str] = set()
        groups = sorted((generated_dir / package / "_models").glob("*.py"))
        for path in [
            generated_dir / package / "models.py",
            generated_dir / package / "enums.py",
            *groups,
        ]:
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                sibling = (
                    path.parent.name == "_models"
                    and node.__class__ is ast.ImportFrom
                    and node.level == 1
                )
                if isinstance(node, ast.ImportFrom) and node.module != "enums" and not sibling:
                    used |= {a.asname or a.name for a in node.names if a.name != "*"}
        for module in ("dispatch.py", "session.py", "__init__.py"):
            path = generated_dir / package / module
            if path.exists():
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                    if isinstance(node, ast.ClassDef):
                        used.add(node.name)
                    elif isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
                    ):
                        # every exported name: the package root binds the first module's that has it
                        used |= {
                            e.value
                            for e in ast.walk(node.value)
                            if isinstance(e, ast.Constant) and isinstance(e.value, str)
                        }
        used = {name for name in used if name[:1].isupper()}
        assert (
            used <= RESERVED_CLASS_NAMES
        ), f"{package}: add {sorted(used - RESERVED_CLASS_NAMES)} to RESERVED_CLASS_NAMES"


def test_a_definition_named_like_an_import_is_renamed_not_shadowed(
    tmp_path: Path, minimal_schema: dict[str, Any]
) -> None:
    """A `$defs` entry called `Field` must not replace pydantic's `Field` (nor be replaced by it)."""
    from cli_support import run_cli, write_json

    minimal_schema["$defs"]["Field"] = {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
    }
    minimal_schema["$defs"]["PingRequest"]["properties"]["field"] = {"$ref": "#/$defs/Field"}
    minimal_schema["$defs"]["PingRequest"]["properties"]["_meta"] = {
        "type": "object"
    }  # needs Field(alias=...)
    write_json(tmp_path / "s.json", minimal_schema)
    result = run_cli(
        "generate", "--schema", "s.json", "--package", "named", "--out", "out", cwd=tmp_path
    )
    assert result.returncode == 0, result.describe()
    script = (
        "import named, pydantic\n"
        "import sys\n"
        "group = sys.modules[named.Field_.__module__]\n"
        "assert named.Field_.__name__ == 'Field_' and group.Field is pydantic.Field\n"
        'r = named.PingRequest.from_json(\'{"bar": "b", "field": {"x": 1}, "_meta": {}}\')\n'
        "assert type(r.field) is named.Field_ and r.field.x == 1 and r.meta == {}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path / "out",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
