"""The model stage: models.py through datamodel-code-generator, its cache, and the Formatter
that overlaps black with it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.ir.nodes import Enum, Protocol, Struct
from codegen.pins import PinFile


@pytest.fixture(scope="module")
def draft_ir(pinned_sources: PinFile) -> Protocol:
    from codegen.pipeline import ir_for

    target = pinned_sources.default_pin
    return ir_for(target.source, target.sha256)


def test_dmcg_input_carries_every_definition_and_field(draft_ir: Protocol) -> None:
    from codegen.render.models import dmcg_input

    schema, data = dmcg_input(draft_ir)
    models = [d for d in draft_ir.definitions if not isinstance(d, Enum)]
    assert list(schema["$defs"]) == [d.name for d in models]
    for d in models:
        assert data[f"#/$defs/{d.name}"]["name"] == d.name
        if isinstance(d, Struct):
            props = schema["$defs"][d.name]["properties"]
            assert list(props) == [f.wire_name for f in d.fields]
            assert all(p["x-acp-field"].startswith(f"{f.py_name}: ") for p, f in zip(props.values(), d.fields))
    assert data["#"]["footer"] and data["#"]["exports"] == [d.name for d in models]


def test_models_py_defines_every_definition_once_and_ends_with_the_footer(draft_ir: Protocol) -> None:
    from codegen.render.models import FOOTER, render_models

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
    assert text.rstrip().endswith(FOOTER)
    # DMCG orders by name, moving a definition only after what it is evaluated from
    position = {name: i for i, name in enumerate(defined)}
    for d in draft_ir.definitions:
        if isinstance(d, Struct) and d.base:
            assert position[d.base] < position[d.name], d.name


def test_the_model_render_is_cached_by_content(draft_ir: Protocol, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codegen.render import models

    first = models.render_models(draft_ir, "# head\n", tmp_path)
    assert len(list(tmp_path.iterdir())) == 1

    def no_dmcg(*args: object) -> str:
        raise AssertionError("DMCG ran although the cache holds this input")

    monkeypatch.setattr(models, "_run_dmcg", no_dmcg)
    assert models.render_models(draft_ir, "# head\n", tmp_path) == first
    with pytest.raises(AssertionError, match="DMCG ran"):  # another head is another input
        models.render_models(draft_ir, "# other head\n", tmp_path)


def test_formatter_submissions_equal_one_format_files_call() -> None:
    from codegen.fmt import Formatter, format_files

    big = "".join(f"class C{i}:\n    x: int = {i}\n\n\n" for i in range(3000))  # split, parallel
    small = "x  =  {'a':1}\n"
    with Formatter(None) as formatter:
        formatter.submit({"a.py": big, "py.typed": ""})
        formatter.submit({"b.py": small})
        result = formatter.result()
    assert result == format_files({"a.py": big, "py.typed": "", "b.py": small}, None)
    assert list(result) == ["a.py", "py.typed", "b.py"] and result["b.py"] == 'x = {"a": 1}\n'


def test_formatter_failure_names_the_file() -> None:
    from codegen.fmt import Formatter

    with Formatter(None) as formatter:
        formatter.submit({"ok.py": "x = 1\n"})
        formatter.submit({"bad.py": "def broken(:\n"})
        with pytest.raises(CodegenError) as caught:
            formatter.result()
    assert caught.value.diagnostics[0].render().startswith("error[format-failed] bad.py: ")
