"""Import evaluates each generated class's annotations once (the runtime's `_annotations`): what
pydantic gets is the object, not a string to compile; where a name is not defined yet, one shared
`ForwardRef` per text. A user's own subclass keeps pydantic's resolution. A fresh interpreter per
check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
from cli_support import GENERATED

PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")

_LEFT = """
import json, re, sys, typing
from pydantic import BaseModel
from pydantic._internal import _typing_extra
strings = []  # every string pydantic would have to compile (see `_type_convert`)
convert = _typing_extra._type_convert
def spy(arg):
    if isinstance(arg, str):
        strings.append(arg)
    return convert(arg)
_typing_extra._type_convert = spy
from {package} import *
import acp_runtime.models.base as base
groups = [mod for name, mod in sorted(sys.modules.items()) if name.startswith("{package}._models.")]
left, total, early, refs, fields = 0, 0, [], {{}}, {{}}
for cls, module in [(base.AcpModel, base), (base.TaggedModel, base),
                    *((c, g) for g in groups for c in vars(g).values())]:
    if not (isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__module__ == module.__name__):
        continue
    order = {{name: i for i, name in enumerate(vars(module))}}
    for field, value in vars(cls).get("__annotations__", {{}}).items():
        total += 1
        if isinstance(value, str):
            early.append(f"{{cls.__name__}}.{{field}}: a string")
        elif isinstance(value, typing.ForwardRef):
            left += 1
            text = value.__forward_arg__
            refs.setdefault((module.__name__, text), set()).add(id(value))
            fields.setdefault((module.__name__, text), []).append(field)
            names = [n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if n in order]
            # a reference left must name something defined after its class (or the class itself)
            if not any(order[n] >= order[cls.__name__] for n in names):
                early.append(f"{{cls.__name__}}.{{field}}: {{text}}")
# a text without a call: one ForwardRef per module; with one: a ForwardRef per field
shared = all(len(ids) == 1 for (_, text), ids in refs.items() if "(" not in text)
apart = all(len(ids) == len(fields[key]) for key, ids in refs.items() if "(" in key[1])
print(json.dumps({{"left": left, "total": total, "early": early, "shared": shared, "apart": apart,
                  "strings": strings}}))
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=GENERATED,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("package", PACKAGES)
def test_import_leaves_only_forward_references_unevaluated(package: str) -> None:
    found = json.loads(_run(_LEFT.format(package=package)))
    assert found["early"] == []
    assert found["left"] < found["total"] / 4, found  # most names are defined before their use
    assert found["shared"], "one ForwardRef per distinct text without a call"
    assert found["apart"], "a ForwardRef per field for a text with a call"
    assert found["strings"] == []  # pydantic compiles no annotation of ours at import


def test_a_users_subclass_keeps_pydantics_resolution() -> None:
    shown = _run("""
        from __future__ import annotations
        from acp_v2_draft import AcpModel

        def make():
            class Local(AcpModel):
                n: int
            class User(AcpModel):
                child: Local | None = None
            return User

        User = make()
        print(repr(User.__annotations__["child"]), User.model_validate({"child": {"n": 1}}).child.n)
    """)
    assert re.fullmatch(r"'Local \| None' 1\n", shown)


def test_a_text_without_a_call_is_evaluated_once_one_with_a_call_each_time() -> None:
    """`StrictStr | None` in two classes is one object; a `Field(...)` in two is two `FieldInfo`s
    (pydantic copies them shallowly, so sharing one could leak one field's settings to another)."""
    shown = json.loads(_run("""
        import ast, json, sys
        from typing import ForwardRef
        from acp_v2_draft import *
        groups = [m for name, m in sorted(sys.modules.items()) if name.startswith("acp_v2_draft._models.")]
        by_text = {}  # (module, text) -> the evaluated values of its fields (forward references left out)
        for m in groups:
            for node in ast.parse(open(m.__file__, encoding="utf-8").read()).body:
                if not isinstance(node, ast.ClassDef):
                    continue
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        # the annotation's text, as `from __future__` keeps it
                        text = ast.unparse(item.annotation)
                        value = vars(getattr(m, node.name))["__annotations__"][item.target.id]
                        if not isinstance(value, ForwardRef):
                            by_text.setdefault((m.__name__, text), []).append(value)
        repeated = {k: values for k, values in by_text.items() if len(values) > 1}
        print(json.dumps({
            "plain": sorted({len({id(v) for v in vs}) for (_, t), vs in repeated.items() if "(" not in t}),
            "called": all(len({id(v) for v in vs}) == len(vs) for (_, t), vs in repeated.items() if "(" in t),
            "counts": [sum(1 for _, t in repeated if ("(" in t) is c) for c in (False, True)],
        }))
    """))
    assert shown["plain"] == [1]  # each repeated text without a call: one object
    assert shown["called"]  # each repeated text with a call: an object per field
    assert min(shown["counts"]) > 10, shown


def test_a_reloaded_models_module_shares_nothing_with_its_previous_execution() -> None:
    """A reloaded group module's classes name the classes of that execution, not the old ones."""
    shown = _run("""
        import importlib, sys
        import acp_v1.models as m
        group = sys.modules[m.InitializeRequest.__module__]
        old = group.ClientCapabilities
        importlib.reload(group)
        value = {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}
        caps = group.InitializeRequest.model_validate(value).client_capabilities
        print(type(caps) is group.ClientCapabilities, type(caps) is old)
    """)
    assert shown == "True False\n"
