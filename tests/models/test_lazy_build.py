"""Classes are built at first use, not at import: a fresh interpreter per check (`generated/` on
the path), counting the classes pydantic has completed (`__pydantic_complete__`) and those whose
validator is built (anything but pydantic's placeholder in the class's own `__dict__`)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from cli_support import GENERATED

PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")

# Prints {"classes": n, "built": [...], "validators": [...]} after the snippet ran.
_COUNT = """
import json, sys
from pydantic import BaseModel
from pydantic._internal._mock_val_ser import MockValSer
def state(pkg):
    groups = [m for name, m in list(sys.modules.items()) if name.startswith(pkg.__name__ + "._models.")]
    classes = list({id(c): c for m in groups for c in vars(m).values() if isinstance(c, type)
                    and issubclass(c, BaseModel) and c.__module__ == m.__name__}.values())
    built = sorted(c.__name__ for c in classes if c.__dict__.get("__pydantic_complete__"))
    validators = sorted(c.__name__ for c in classes
                        if not isinstance(c.__dict__.get("__pydantic_validator__"), MockValSer))
    return {"classes": len(classes), "built": built, "validators": validators}
"""


def _run(package: str, body: str) -> dict[str, object]:
    code = f"import {package} as pkg\n{_COUNT}\n{textwrap.dedent(body)}"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("package", PACKAGES)
def test_import_builds_no_validator(package: str) -> None:
    """Importing the package and every name of it (`import *`) builds no class."""
    out = _run(
        package,
        f"""
        assert "{package}.models" not in sys.modules  # nothing loaded by the import itself
        from {package} import *
        print(json.dumps(state(pkg)))
        """,
    )
    assert isinstance(out["classes"], int) and out["classes"] > 100
    assert out["built"] == [] and out["validators"] == []


def test_first_use_builds_the_class_and_what_it_needs() -> None:
    """Parsing one `session/update` builds that class (fast path, serializer) and nothing unrelated;
    the nested classes it holds are validated through its own validator."""
    out = _run(
        "acp_v2_draft",
        """
        from acp_v2_draft import UpdateSessionNotification as N
        wire = ('{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m",'
                '"content":{"type":"text","text":"hi"}}}')
        before = state(pkg)
        n = N.model_validate_json(wire)
        assert type(N.__pydantic_validator__).__name__ == "FastPathValidator"
        assert N.__pydantic_validator__.fast is not None
        assert n.to_json() == wire, n.to_json()
        assert type(n.update.content).__name__ == "ContentBlockText"
        after = state(pkg)
        print(json.dumps({"before": before["built"], "after": after["built"],
                          "classes": after["classes"]}))
        """,
    )
    assert out["before"] == []
    after = out["after"]
    assert isinstance(after, list) and "UpdateSessionNotification" in after
    assert "InitializeRequest" not in after  # unrelated classes stay unbuilt
    assert isinstance(out["classes"], int) and len(after) < out["classes"] // 4


def test_reading_the_schema_of_an_unbuilt_class_builds_it() -> None:
    """`cls.__pydantic_core_schema__` (what tools hand to pydantic-core) is the real schema."""
    out = _run(
        "acp_v2_draft",
        """
        from acp_v2_draft import InitializeRequest as R
        schema = R.__pydantic_core_schema__
        assert type(schema) is dict, type(schema)
        assert type(R.__pydantic_validator__).__name__ == "FastPathValidator"
        print(json.dumps(state(pkg)))
        """,
    )
    assert out["built"] == ["InitializeRequest"]


_CONCURRENT = """
from acp_v2_draft import UpdateSessionNotification as N
wire = ('{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c",'
        '"status":"completed","content":[{"type":"content","content":{"type":"text","text":"o"}}]}}')
def use():
    n = N.model_validate_json(wire)
    return n.to_json(), type(n.update).__name__, type(N.__pydantic_validator__).__name__
"""


def test_two_threads_using_a_class_first_at_once() -> None:
    """Both threads get the same object and bytes, and the class ends with its fast path."""
    out = _run(
        "acp_v2_draft",
        _CONCURRENT + """
import threading
barrier, results = threading.Barrier(8), []
def worker():
    barrier.wait()
    results.append(use())
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"results": sorted(set(map(tuple, results))), "n": len(results),
                  "fast": N.__pydantic_validator__.fast is not None, "wire": wire}))
""",
    )
    assert out["n"] == 8
    assert out["results"] == [[out["wire"], "SessionUpdateToolCallUpdate", "FastPathValidator"]]
    assert out["fast"] is True


def test_two_tasks_using_a_class_first_at_once() -> None:
    """Two event-loop tasks (and a thread of the loop's executor) use the class first together."""
    out = _run(
        "acp_v2_draft",
        _CONCURRENT + """
import asyncio
async def task():
    await asyncio.sleep(0)
    return use()
async def main():
    loop = asyncio.get_running_loop()
    return await asyncio.gather(task(), task(), loop.run_in_executor(None, use))
results = asyncio.run(main())
print(json.dumps({"results": sorted(set(map(tuple, results))), "wire": wire}))
""",
    )
    assert out["results"] == [[out["wire"], "SessionUpdateToolCallUpdate", "FastPathValidator"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_first_use_skips_the_chain_walk_below_the_modules_bound(package: str) -> None:
    """The package's `_models` states the longest chain of classes (`_CHAIN_BOUND`, 6 in ACP's schemas); below
    the runtime's step (`acp_runtime.models.deferred`) a first use builds without walking the classes below it first.
    """
    out = _run(
        package,
        """
        import importlib
        deferred = importlib.import_module("acp_runtime.models.deferred")
        models = importlib.import_module(pkg.__name__ + ".models")
        def refuse(cls):
            raise AssertionError(f"walked the chain below {cls.__name__}")
        deferred._chain_steps = refuse
        from pydantic import ValidationError
        try:
            models.InitializeRequest.model_validate({})  # built (then refused: fields missing)
        except ValidationError:
            pass
        assert models.InitializeRequest.__pydantic_complete__
        groups = importlib.import_module(pkg.__name__ + "._models")
        print(json.dumps({"bound": groups._CHAIN_BOUND, "step": deferred._CHAIN_STEP}))
        """,
    )
    assert out == {"bound": 6, "step": 16}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_name_loads_only_the_modules_up_to_its_own(package: str) -> None:
    """`from pkg import <model>` loads neither `dispatch` (nor asyncio, nor the JSON-RPC runtime)
    nor `session`; a dispatch name loads `dispatch`; a runtime name only its runtime module."""
    out = _run(
        package,
        f"""
        loaded = lambda: sorted(m for m in sys.modules if m.startswith(("{package}.", "acp_runtime.")) or m == "asyncio")
        from {package} import AcpModel
        first = loaded()
        from {package} import InitializeRequest
        second = loaded()
        from {package} import Agent
        print(json.dumps({{"runtime": first, "model": second, "dispatch": loaded()}}))
        """,
    )
    assert f"{package}.models" not in out["runtime"]
    assert {f"{package}.enums", f"{package}.models"} <= set(out["model"])
    assert not {
        "asyncio",
        f"{package}.dispatch",
        f"{package}.session",
        "acp_runtime.jsonrpc",
    } & set(out["model"])
    assert {"asyncio", f"{package}.dispatch"} <= set(out["dispatch"])
    assert f"{package}.session" not in out["dispatch"]


@pytest.mark.parametrize("package", PACKAGES)
def test_names_asked_one_by_one_are_what_a_full_load_binds(package: str) -> None:
    """Every exported name, asked alone (the package's bindings and caches cleared before each,
    so each lookup finds its module), is the object of the one module that exports it, as
    `import *` binds it."""
    names = _run(package, "print(json.dumps({'names': pkg.__all__}))")["names"]
    assert isinstance(names, list) and len(names) == len(set(names)) > 100
    out = _run(
        package,
        f"""
        import importlib
        names = {names!r}
        values = {{}}
        for name in names:
            pkg._bind.cache_clear()
            pkg._load.cache_clear()
            pkg._runtime.cache_clear()
            for bound in [*names, "__all__"]:
                if bound not in ("SHA256", "SOURCE"):
                    vars(pkg).pop(bound, None)
            values[name] = getattr(pkg, name)
        homes = {{}}
        for name in pkg._RUNTIME_EXPORTS:
            homes.setdefault(name, []).append(importlib.import_module("acp_runtime.bindings"))
        for module_name in pkg._EXPORTING:
            module = importlib.import_module(f"{package}.{{module_name}}")
            for name in module.__all__:
                homes.setdefault(name, []).append(module)
        wrong = [n for n in names if n not in ("SHA256", "SOURCE")
                 and (len(homes.get(n, [])) != 1 or values[n] is not getattr(homes[n][0], n))]
        print(json.dumps({{"wrong": wrong, "all": sorted(pkg.__all__) == sorted(names)}}))
        """,
    )
    assert out == {"wrong": [], "all": True}


@pytest.mark.parametrize("package", PACKAGES)
def test_the_models_facade_loads_a_group_per_name_and_dir_loads_none(package: str) -> None:
    """`models.X` loads X's group; `dir(models)` lists every name and loads no group; an unknown
    name is an AttributeError; a class pickles by its group's path."""
    out = _run(
        package,
        f"""
        import pickle
        import {package}.models as models
        groups = lambda: sorted(m for m in sys.modules if m.startswith("{package}._models."))
        listed = set(dir(models))
        before = groups()
        cls = models.InitializeRequest
        after = groups()
        try:
            models.NoSuchModel
        except AttributeError as exc:
            missing = str(exc)
        value = cls.model_validate_json('{{"protocolVersion": 1, "info": {{"name": "a", "version": "1"}}}}')
        again = pickle.loads(pickle.dumps(value))
        print(json.dumps({{"all": set(models.__all__) <= listed, "before": before, "after": after,
                          "module": cls.__module__, "missing": missing,
                          "pickled": again == value and type(again) is cls}}))
        """,
    )
    assert out["all"] and out["before"] == []
    assert out["module"] == f"{package}._models.initialize" and out["module"] in out["after"]
    assert len(out["after"]) < 20  # the groups InitializeRequest names, not all of them
    assert "NoSuchModel" in out["missing"] and out["pickled"]


@pytest.mark.parametrize("package", PACKAGES)
def test_dispatch_loads_the_models_of_a_method_when_its_message_needs_them(package: str) -> None:
    """Importing `dispatch` (handler bases, peers, method tables) loads no model group; reading a
    method's params type loads that type's groups only, and the type is the models' class."""
    out = _run(
        package,
        f"""
        from {package} import AGENT_METHODS, Agent
        groups = lambda: sorted(m for m in sys.modules if m.startswith("{package}._models."))
        before = groups()
        spec = AGENT_METHODS["initialize"]
        same = spec.params is pkg.models.InitializeRequest and spec.result is pkg.models.InitializeResponse
        same = same and pkg.InitializeRequest is spec.params
        print(json.dumps({{"before": before, "after": groups(), "same": same}}))
        """,
    )
    assert out["before"] == [] and out["same"]
    assert f"{package}._models.initialize" in out["after"]
    assert f"{package}._models.session_prompt" not in out["after"]
