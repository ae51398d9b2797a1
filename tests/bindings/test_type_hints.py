"""`typing.get_type_hints` works on every generated class and on every method of the handler
bases, peers and session handle, with no extra arguments (the dispatch module names its models
through `models`, which loads each at its first use)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_support import GENERATED

PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")

_SCRIPT = """
import inspect, json, sys, typing
import {package} as pkg
from {package} import dispatch
problems, checked = [], 0
classes = [getattr(pkg, name) for name in pkg.__all__ if isinstance(getattr(pkg, name), type)]
for cls in classes:
    if not cls.__module__.startswith("{package}"):
        continue
    targets = [("", cls)] + [
        (name, member) for name, member in vars(cls).items()
        if inspect.isfunction(member) and cls.__module__ in ("{package}.dispatch", "{package}.session")
    ]
    for name, target in targets:
        try:
            typing.get_type_hints(target)
            checked += 1
        except Exception as exc:
            problems.append(f"{{cls.__qualname__}}.{{name}}: {{type(exc).__name__}}: {{exc}}")
print(json.dumps({{"problems": problems, "checked": checked}}))
"""


@pytest.mark.parametrize("package", PACKAGES)
def test_get_type_hints_works_on_every_class_and_handler(package: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(package=package)],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["problems"] == []
    assert out["checked"] > 300
