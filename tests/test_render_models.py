"""The model stage: models.py through datamodel-code-generator, its cache, and the Formatter
that overlaps black with it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_codegen.errors import CodegenError
from acp_codegen.ir.nodes import Enum, Protocol, Struct
from acp_codegen.pins import PinFile


@pytest.fixture(scope="module")
def draft_ir(pinned_sources: PinFile) -> Protocol:
    from acp_codegen.pipeline import ir_for

    target = pinned_sources.default_pin
    return ir_for(target.source, target.sha256)


def test_dmcg_input_carries_every_definition_and_field(draft_ir: Protocol) -> None:
    from acp_codegen.render.models import dmcg_input

    schema, data = dmcg_input(draft_ir)
    models = [d for d in draft_ir.definitions if not isinstance(d, Enum)]
    assert list(schema["$defs"]) == [d.name for d in models]
    for d in models:
        assert data[f"#/$defs/{d.name}"]["name"] == d.name
        # DMCG reads only the kind of each definition; what it renders is all template data
        assert schema["$defs"][d.name] == ({"type": "object"} if isinstance(d, Struct) else {"type": "string"})
        if isinstance(d, Struct):
            fields = data[f"#/$defs/{d.name}"]["fields"]
            assert [f["line"].split(":")[0] for f in fields] == [f.py_name for f in d.fields]
            assert [bool(f["doc"]) for f in fields] == [bool(f.description) for f in d.fields]
    assert data["#"]["footer"] and data["#"]["exports"] == [d.name for d in models]


def test_the_models_body_defines_every_definition_once(draft_ir: Protocol) -> None:
    from acp_codegen.render.models import render_models

    text = render_models(draft_ir, "from __future__ import annotations\n")
    tree = ast.parse(text)
    defined: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            defined.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.append(node.target.id)
    expected = [d.name for d in draft_ir.definitions if not isinstance(d, Enum)]
    assert sorted(defined) == sorted(expected)
    # every field line of the IR is rendered, with its docstring
    for d in draft_ir.definitions:
        if isinstance(d, Struct):
            for f in d.fields:
                assert f"\n    {f.py_name}: " in text, (d.name, f.py_name)


def test_each_group_module_defines_what_it_is_evaluated_from_first(draft_ir: Protocol) -> None:
    """The order is the IR's: a base class, and what an alias is evaluated from, come first in a
    group module (or are imported from another group)."""
    from acp_codegen.ir.order import eager_deps
    from acp_codegen.render.package import render_model_modules

    files, _ = render_model_modules(draft_ir, "acp_v2_draft")
    by_name = {d.name: d for d in draft_ir.definitions}
    checked = 0
    for path, text in files.items():
        if not path.startswith("_models/") or path.endswith("__init__.py"):
            continue
        position: dict[str, int] = {}
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                position[node.name] = len(position)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in by_name:
                position[node.target.id] = len(position)
        for name, index in position.items():
            for dep in eager_deps(by_name[name]):
                if dep in position:
                    assert position[dep] < index, f"{path}: {name} before {dep}"
                    checked += 1
    assert checked > 50


def test_the_model_render_is_cached_by_content(draft_ir: Protocol, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acp_codegen.render import models

    first = models.render_models(draft_ir, "# head\n", tmp_path)
    assert len(list(tmp_path.iterdir())) == 1

    def no_dmcg(*args: object) -> str:
        raise AssertionError("DMCG ran although the cache holds this input")

    monkeypatch.setattr(models, "_run_dmcg", no_dmcg)
    assert models.render_models(draft_ir, "# head\n", tmp_path) == first
    with pytest.raises(AssertionError, match="DMCG ran"):  # another head is another input
        models.render_models(draft_ir, "# other head\n", tmp_path)


def test_formatter_submissions_equal_one_format_files_call() -> None:
    from acp_codegen.fmt import Formatter, format_files

    big = "".join(f"class C{i}:\n    x: int = {i}\n\n\n" for i in range(3000))  # split, parallel
    small = "x  =  {'a':1}\n"
    with Formatter(None) as formatter:
        formatter.submit({"a.py": big, "py.typed": ""})
        formatter.submit({"b.py": small})
        result = formatter.result()
    assert result == format_files({"a.py": big, "py.typed": "", "b.py": small}, None)
    assert list(result) == ["a.py", "py.typed", "b.py"] and result["b.py"] == 'x = {"a": 1}\n'


def test_a_known_head_is_kept_and_only_the_rest_is_formatted() -> None:
    """`heads`: the opening is taken as black's output (a deliberately unformatted one stays as it
    is, so black did not see it); the rest is formatted; without a statement right after two
    blank lines (one blank line, a decorator, a comment) the whole file is formatted."""
    from acp_codegen.fmt import Formatter

    head = "x  =  1\n"  # not black's layout: proves the head is not formatted
    rest = "class C:\n    y  =  2\n"
    loose = "z  =  3\n"
    files = {
        "a.py": head + "\n\n" + rest,
        "b.py": head + "\n" + rest,
        "c.py": head + "\n\n" + loose,
        "d.py": head + "\n\n@d\n" + rest,
        "e.py": head + "\n\n# note\n" + loose,
    }
    with Formatter(None) as formatter:
        formatter.submit(files, heads=dict.fromkeys(files, head))
        result = formatter.result()
    assert result["a.py"] == "x  =  1\n\n\nclass C:\n    y = 2\n"
    assert result["b.py"] == "x = 1\n\n\nclass C:\n    y = 2\n"  # one blank line: not a cut
    assert result["c.py"] == "x  =  1\n\n\nz = 3\n"  # any statement after two blank lines
    assert result["d.py"] == "x = 1\n\n\n@d\nclass C:\n    y = 2\n"  # a decorator: not a cut
    assert result["e.py"] == "x = 1\n\n\n# note\nz = 3\n"  # a comment: not a cut


def test_every_group_head_is_blacks_output(draft_ir: Protocol) -> None:
    """The openings the format stage skips (`render_model_modules`' heads) are black's layout:
    every group module has one, and the facade is one whole."""
    import black

    from acp_codegen.fmt import black_mode
    from acp_codegen.render.package import render_model_modules

    files, heads = render_model_modules(draft_ir, "acp_v2_draft")
    groups = [path for path in files if path.startswith("_models/") and not path.endswith("__init__.py")]
    assert sorted(heads) == sorted([*groups, "models.py"]) and heads["models.py"] == files["models.py"]
    for path, head in heads.items():
        assert files[path].startswith(head) and black.format_str(head, mode=black_mode()) == head, path


def test_formatter_failure_names_the_file() -> None:
    from acp_codegen.fmt import Formatter

    with Formatter(None) as formatter:
        formatter.submit({"ok.py": "x = 1\n"})
        formatter.submit({"bad.py": "def broken(:\n"})
        with pytest.raises(CodegenError) as caught:
            formatter.result()
    assert caught.value.diagnostics[0].render().startswith("error[format-failed] bad.py: ")


def test_reserved_class_names_cover_every_name_the_package_already_uses(generated_dir: Path) -> None:
    """What the model modules and enums.py import (but the names of other model groups), and what
    the other modules export from the package root."""
    from acp_codegen.ir.naming import RESERVED_CLASS_NAMES

    for package in ("acp_v2_draft", "acp_v2", "acp_v1"):
        used: set[str] = set()
        groups = sorted((generated_dir / package / "_models").glob("*.py"))
        for path in [generated_dir / package / "models.py", generated_dir / package / "enums.py", *groups]:
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                sibling = path.parent.name == "_models" and node.__class__ is ast.ImportFrom and node.level == 1
                if isinstance(node, ast.ImportFrom) and node.module != "enums" and not sibling:
                    used |= {a.asname or a.name for a in node.names if a.name != "*"}
        for module in ("dispatch.py", "session.py", "__init__.py"):
            path = generated_dir / package / module
            if path.exists():
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                    if isinstance(node, ast.ClassDef):
                        used.add(node.name)
                    elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                        # every exported name: the package root binds the first module's that has it
                        used |= {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        used = {name for name in used if name[:1].isupper()}
        assert used <= RESERVED_CLASS_NAMES, f"{package}: add {sorted(used - RESERVED_CLASS_NAMES)} to RESERVED_CLASS_NAMES"


def test_a_definition_named_like_an_import_is_renamed_not_shadowed(tmp_path: Path, minimal_schema: dict[str, Any]) -> None:
    """A `$defs` entry called `Field` must not replace pydantic's `Field` (nor be replaced by it)."""
    from cli_support import run_cli, write_json

    minimal_schema["$defs"]["Field"] = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    minimal_schema["$defs"]["PingRequest"]["properties"]["field"] = {"$ref": "#/$defs/Field"}
    minimal_schema["$defs"]["PingRequest"]["properties"]["_meta"] = {"type": "object"}  # needs Field(alias=...)
    write_json(tmp_path / "s.json", minimal_schema)
    result = run_cli("generate", "--schema", "s.json", "--package", "named", "--out", "out", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    script = (
        "import named, pydantic\n"
        "import sys\n"
        "group = sys.modules[named.Field_.__module__]\n"
        "assert named.Field_.__name__ == 'Field_' and group.Field is pydantic.Field\n"
        "r = named.PingRequest.from_json('{\"bar\": \"b\", \"field\": {\"x\": 1}, \"_meta\": {}}')\n"
        "assert type(r.field) is named.Field_ and r.field.x == 1 and r.meta == {}\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path / "out", capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_any_dmcg_failure_is_one_diagnostic(draft_ir: Protocol, monkeypatch: pytest.MonkeyPatch) -> None:
    from acp_codegen.render import models

    def broken(*args: object, **kwargs: object) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(models.dmcg, "generate", broken)
    with pytest.raises(CodegenError) as caught:
        models.render_models(draft_ir, "")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.render().startswith("error[model-render] ")
    assert "RecursionError: maximum recursion depth exceeded" in diagnostic.render()


def test_formatter_goes_on_in_process_when_its_workers_die() -> None:
    import os
    import signal

    from acp_codegen.fmt import Formatter, format_files

    big = "".join(f"class C{i}:\n    x: int = {i}\n\n\n" for i in range(3000))
    with Formatter(None, parallel_min_bytes=0) as formatter:
        formatter.submit({"a.py": big})
        pool = formatter._pool  # the test kills its workers
        assert pool is not None
        formatter.result()  # the workers are up
        for pid in list(pool._processes):
            os.kill(pid, signal.SIGKILL)
        formatter.submit({"b.py": big.replace("x: int", "y: int")})
        result = formatter.result()
    assert result == format_files({"a.py": big, "b.py": big.replace("x: int", "y: int")}, None)


def test_rendered_code_is_mostly_in_blacks_layout_already(draft_ir: Protocol) -> None:
    """black formats a second time whatever its first pass changed, so the renderers emit its
    layout: a regression here doubles the format stage's cost (no timing is asserted)."""
    import black

    from acp_codegen.fmt import black_mode, split_pieces
    from acp_codegen.render.package import render_package

    files = render_package(draft_ir, "acp_v2_draft")
    groups = [text for name, text in files.items() if name.startswith("_models/")]
    pieces = [piece for text in groups for piece in split_pieces(text, min_bytes=0)]
    unchanged = sum(black.format_str(piece, mode=black_mode()) == piece for piece in pieces)
    assert len(pieces) > 300 and unchanged >= 0.9 * len(pieces), f"only {unchanged} of {len(pieces)} model pieces are in black's layout"
    for name, text in files.items():  # every other module but two with long generated signatures
        if name.endswith(".py") and not name.startswith("_models/") and name not in ("dispatch.py", "session.py"):
            assert black.format_str(text, mode=black_mode()) == text, f"{name} is not in black's layout"


def test_a_body_without_every_definition_or_with_a_stranger_statement_is_refused(
    draft_ir: Protocol, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What DMCG returns is checked when it is cut: each definition once, nothing unknown."""
    from acp_codegen.render import package
    from acp_codegen.render.model_modules import cut_body

    body = "from x import y\n\n\n__all__ = []\n\n\nclass A(B):\n    pass\n\n\nC: TypeAlias = int\n\"\"\"Doc.\"\"\"\n"
    cut = cut_body(body, ["C", "A"])
    assert cut.order == ("C", "A") and cut.texts["C"] == 'C: TypeAlias = int\n"""Doc."""'
    with pytest.raises(ValueError, match="no definition of D"):
        cut_body(body, ["A", "C", "D"])
    with pytest.raises(ValueError, match="unexpected statement at line 7"):
        cut_body(body, ["C"])
    monkeypatch.setattr(package, "render_models", lambda *args: body)
    with pytest.raises(CodegenError) as caught:
        package.render_model_modules(draft_ir, "acp_v2_draft")
    assert caught.value.diagnostics[0].code == "model-render"
