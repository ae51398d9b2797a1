"""Import evaluates each generated class's annotations once (the runtime's `_annotations`): what
pydantic gets is the object, not a string to compile, except where a name is not defined yet;
a user's own subclass keeps pydantic's resolution. A fresh interpreter per check."""

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
import json, re
from pydantic import BaseModel
import {package}.models as m
order = {{name: i for i, name in enumerate(vars(m))}}
left, total, early = 0, 0, []
for name, cls in vars(m).items():
    if not (isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__module__ == m.__name__):
        continue
    for field, value in vars(cls).get("__annotations__", {{}}).items():
        total += 1
        if isinstance(value, str):
            left += 1
            names = [n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", value) if n in order]
            # a string left must name something defined after its class (or the class itself)
            if not any(order[n] >= order[name] for n in names):
                early.append(f"{{name}}.{{field}}: {{value}}")
print(json.dumps({{"left": left, "total": total, "early": early}}))
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
def test_import_leaves_only_forward_references_as_strings(package: str) -> None:
    found = json.loads(_run(_LEFT.format(package=package)))
    assert found["early"] == []
    assert found["left"] < found["total"] / 4, found  # most names are defined before their use


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
