"""`acp_codegen/ir/groups.py`: the model groups of `_models`. Every group module resolves each
annotation of its classes (their bases' included) in its own namespace, the groups import each
other without a cycle, and a name loads exactly the definitions it can need."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest
from cli_support import GENERATED

from acp_codegen.ir.chains import named
from acp_codegen.ir.groups import SCALARS, _module_names, model_groups, module_of
from acp_codegen.ir.nodes import Enum, Protocol, Struct
from acp_codegen.ir.order import type_refs
from acp_codegen.pins import PinFile
from acp_codegen.pipeline import ir_for

PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")


@pytest.fixture(scope="module", params=PACKAGES)
def package_ir(request: pytest.FixtureRequest, pinned_sources: PinFile) -> tuple[str, Protocol]:
    target = pinned_sources.get(request.param)
    assert target is not None
    return request.param, ir_for(target.source, target.sha256)


def _closure(protocol: Protocol, name: str) -> set[str]:
    """What a definition can need at run time: what it names, its bases' fields, transitively."""
    out: set[str] = set()
    todo = [name]
    while todo:
        current = protocol.get(todo.pop())
        if current is None or isinstance(current, Enum) or current.name in out:
            continue
        out.add(current.name)
        todo.extend(named(current))
        base = current.base if isinstance(current, Struct) else None
        while base and isinstance(parent := protocol.get(base), Struct):
            todo.extend(ref for f in parent.fields for ref in type_refs(f.type))
            base = parent.base
    return out


def test_groups_partition_the_models_and_import_without_a_cycle(
    package_ir: tuple[str, Protocol],
) -> None:
    _, protocol = package_ir
    groups = model_groups(protocol)
    names = [n for g in groups for n in g.names]
    assert sorted(names) == sorted(d.name for d in protocol.definitions if not isinstance(d, Enum))
    graph = {g.module: {m for m, _ in g.imports} for g in groups}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the assertion's message
        raise AssertionError(f"the groups import in a cycle: {exc.args[1]}") from None
    where = module_of(groups)
    for g in groups:
        for module, imported in g.imports:
            assert module != g.module and all(where[n] == module for n in imported)
    assert model_groups(protocol) == groups  # the same every time (and in name order)
    assert [g.module for g in groups] == sorted(g.module for g in groups)


def test_every_method_message_roots_a_group_of_its_own(package_ir: tuple[str, Protocol]) -> None:
    """A params or result class never rides in the group of the union that lists it (an alias of
    a plain type is in `scalars`): it roots its group, or a request's params and result share the
    method's module (`session/prompt` -> `session_prompt`), which holds nothing else they do not
    need."""
    _, protocol = package_ir
    groups = model_groups(protocol)
    roots = {g.root for g in groups}
    by_method = {g.method[0]: g for g in groups if g.method is not None}
    scalars = next(g.names for g in groups if g.module == SCALARS)
    entries = {n for m in protocol.methods for n in (m.params, m.result) if n} - scalars
    paired = {n for g in by_method.values() for n in g.method[1:]}  # type: ignore[index]
    assert entries and entries - paired <= roots and by_method
    for wire, g in by_method.items():
        method = next(m for m in protocol.methods if m.wire_name == wire and m.params == g.method[1])  # type: ignore[index]
        assert g.root == method.params and method.result in g.names
        assert g.module.startswith(method.handler)


def test_module_names_are_snake_case_unique_and_never_keywords() -> None:
    assert _module_names(["Class", "InitializeRequest", "Scalars"]) == {
        "Class": "class_",
        "InitializeRequest": "initialize_request",
        "Scalars": "scalars_",
    }
    assert _module_names(["FooBar", "Foo_Bar"]) == {"FooBar": "foo_bar", "Foo_Bar": "foo_bar_"}
    assert _module_names(["Con", "Aux", "Com1"]) == {"Con": "con_", "Aux": "aux_", "Com1": "com1_"}
    long = _module_names(["Ab" * 100, "Ab" * 101])
    assert all(len(name) <= 64 for name in long.values()) and len(set(long.values())) == 2
    assert long == _module_names(["Ab" * 101, "Ab" * 100])  # the same names in any order


_ANNOTATIONS = """
import json, sys
import {package}.models as models
names = models.__all__
missing = []
for name in names:
    value = getattr(models, name)
    if not isinstance(value, type) or not hasattr(value, "model_fields"):
        continue
    namespace = vars(sys.modules[value.__module__])
    for klass in value.__mro__:
        for field, text in getattr(klass, "__annotations__", {{}}).items():
            source = getattr(text, "__forward_arg__", text)
            if isinstance(source, str) and klass.__module__.startswith("{package}."):
                try:
                    eval(source, dict(namespace))
                except NameError as exc:
                    missing.append(f"{{value.__module__}}: {{name}}.{{field}} ({{klass.__name__}}): {{exc}}")
print(json.dumps(missing))
"""


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_group_resolves_every_annotation_its_classes_inherit(package: str) -> None:
    """pydantic evaluates a base's annotations again in the subclass's module: every name of a
    class's annotations, through its whole MRO, is defined in (or imported into) its group."""
    assert json.loads(_python(_ANNOTATIONS.format(package=package))) == []


_LOADED = """
import json, sys
from {package} import {name}
groups = [m for n, m in list(sys.modules.items()) if n.startswith("{package}._models.")]
defined = set()
for m in groups:
    for n, v in list(vars(m).items()):
        if (isinstance(v, type) and v.__module__ == m.__name__) or n in getattr(m, "__annotations__", {{}}):
            defined.add(n)
print(json.dumps(sorted(defined)))
"""


@pytest.mark.parametrize(
    ("package", "name"),
    [
        ("acp_v2_draft", "UpdateSessionNotification"),
        ("acp_v2_draft", "InitializeRequest"),
        ("acp_v2", "PromptRequest"),
        ("acp_v1", "SessionNotification"),
    ],
)
def test_a_name_loads_exactly_what_it_can_need(
    package: str, name: str, pinned_sources: PinFile
) -> None:
    target = pinned_sources.get(package)
    assert target is not None
    protocol = ir_for(target.source, target.sha256)
    scalars = next(g.names for g in model_groups(protocol) if g.module == SCALARS)
    loaded = set(json.loads(_python(_LOADED.format(package=package, name=name))))
    # what it can need, and a request's result with its params (the method's module)
    pairs = {m.params: m.result for m in protocol.methods if m.params and m.result}
    closure = _closure(protocol, name)
    closure |= {x for n in list(closure) if n in pairs for x in _closure(protocol, pairs[n])}
    assert loaded - scalars <= closure - scalars and _closure(protocol, name) - scalars <= loaded
    assert len(loaded) < len(protocol.definitions) / 2


def test_the_facade_names_every_group_module_it_loads(generated_dir: Path) -> None:
    """`models._NAMES` and the type checker's imports of the facade agree with the files."""
    for package in PACKAGES:
        facade = ast.parse((generated_dir / package / "models.py").read_text(encoding="utf-8"))
        checked: dict[str, str] = {}
        table: dict[str, str] = {}
        for node in ast.walk(facade):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("_models."):
                checked.update((a.name, node.module.removeprefix("_models.")) for a in node.names)
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_NAMES":
                table = {n: m for m, names in ast.literal_eval(node.value).items() for n in names}
        files = {p.stem for p in (generated_dir / package / "_models").glob("*.py")} - {"__init__"}
        assert checked == table and set(table.values()) == files, package


def test_hostile_group_names_and_imports_generate_in_blacks_layout(tmp_path: Path) -> None:
    """A root whose name is longer than a file name and a docstring line, and a module importing
    more names from another than one line holds: the modules are black's output, and the
    package imports and validates."""
    import black
    from generator_support import generated_ok, minimal, ping, python_ok

    from acp_codegen.fmt import LINE_LENGTH

    def black_mode() -> black.Mode:
        return black.Mode(target_versions={black.TargetVersion.PY311}, line_length=LINE_LENGTH)

    schema = minimal()
    long_name = "Shared" + "Very" * 60 + "LongName"  # in snake case, longer than a file name may be
    schema["$defs"][long_name] = {"type": "object", "properties": {"v": {"type": "string"}}}
    for i in range(14):  # aliases of plain types: all in `scalars`, one import line too long
        schema["$defs"][f"Part{i:02d}WithALongerName"] = {"type": "integer"}
    props = {f"p{i}": {"$ref": f"#/$defs/Part{i:02d}WithALongerName"} for i in range(14)}
    props["shared"] = {"$ref": f"#/$defs/{long_name}"}
    ping(schema)["properties"].update(props)
    schema["$defs"]["PingResponse"]["properties"].update(props)
    out = generated_ok(tmp_path, schema)
    package = out / "hostile"
    for path in sorted((package / "_models").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert black.format_str(text, mode=black_mode()) == text, path.name
    request = (package / "_models" / "ping.py").read_text(encoding="utf-8")  # the method's module
    assert "from .scalars import (\n    Part00WithALongerName,\n" in request
    assert f"from .{long_name[:6].lower()}_very_very" in request  # the long name's own group
    shown = python_ok(
        out, "import hostile\nprint(hostile.PingRequest.model_validate({'bar': 'b', 'p3': 1}).p3)"
    )
    assert shown.strip() == "1"
