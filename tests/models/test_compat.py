"""What `_compat` emulates for older pydantic minors, tested on whichever pydantic is installed:
`BestFit` (the smart-union rule pydantic-core of 2.11 loses under wrap validators), the
completion hook `model_rebuild` runs where pydantic has none, and one lower bound everywhere
(pyproject, the nox matrix, scaffolded projects).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_runtime.models import compat
from acp_runtime.models.fastpath import FastPathValidator
from pydantic import ValidationError

from acp_codegen.scaffold.project import DEPENDENCIES

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned

ROOT = Path(__file__).resolve().parents[2]
PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}]}


def test_a_request_s_params_take_the_option_that_sets_the_most_fields(draft: ModuleType) -> None:
    # ListProvidersRequest (only `_meta`) accepts anything as extras and comes first in the union
    request = draft.ClientRequest.model_validate(
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": PROMPT}
    )
    assert type(request.params) is draft.PromptRequest
    assert request.params.session_id == "s"


def _fit(draft: ModuleType) -> Any:
    return compat.BestFit(draft.ListProvidersRequest | draft.PromptRequest)


@pytest.mark.parametrize("package", ["draft", "stable"])
def test_an_option_that_is_an_alias_of_tagged_variants_is_considered(
    package: str, request: pytest.FixtureRequest
) -> None:
    # `SetSessionConfigOptionRequest` is a tagged union, not a class; 2.11 picked DeleteSessionRequest
    pkg = request.getfixturevalue(package)
    params = {"sessionId": "s", "configId": "c", "type": "boolean", "value": True}
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/set_config_option", "params": params}
    parsed = pkg.ClientRequest.model_validate(message)
    assert type(parsed.params) is pkg.SetSessionConfigOptionRequestBoolean
    fit = compat.BestFit(pkg.DeleteSessionRequest | pkg.SetSessionConfigOptionRequest)
    loose = pkg.DeleteSessionRequest.model_validate(params)
    assert type(fit.refit(params, loose)) is pkg.SetSessionConfigOptionRequestBoolean


def test_best_fit_replaces_a_looser_result(draft: ModuleType) -> None:
    loose = draft.ListProvidersRequest.model_validate(PROMPT)
    assert "sessionId" in (loose.model_extra or {})  # kept whole, as unknown fields
    fitted = _fit(draft).refit(PROMPT, loose)
    assert type(fitted) is draft.PromptRequest
    assert fitted.model_dump(mode="json", by_alias=True, exclude_unset=True) == PROMPT


def test_best_fit_keeps_a_result_no_option_improves(draft: ModuleType) -> None:
    fit = _fit(draft)
    meta_only = {"_meta": {"k": 1}}
    result = draft.ListProvidersRequest.model_validate(meta_only)
    assert fit.refit(meta_only, result) is result  # PromptRequest cannot set more than `_meta`
    prompt = draft.PromptRequest.model_validate(PROMPT)
    assert fit.refit(PROMPT, prompt) is prompt
    assert fit.refit(["not", "a", "dict"], "x") == "x"


def test_best_fit_skips_options_the_value_does_not_fit(draft: ModuleType) -> None:
    bad = {"sessionId": "s", "prompt": []}  # minLength 1: PromptRequest refuses it
    with pytest.raises(ValidationError):
        draft.PromptRequest.model_validate(bad)
    result = draft.ListProvidersRequest.model_validate(bad)
    assert _fit(draft).refit(bad, result) is result


def test_best_fit_ties_keep_pydantic_core_s_pick(draft: ModuleType) -> None:
    fit = compat.BestFit(draft.ListProvidersRequest | draft.LogoutAuthRequest)
    value = {"_meta": {}}
    result = draft.LogoutAuthRequest.model_validate(value)
    assert fit.refit(value, result) is result


def test_best_fit_reads_the_wire_names_of_classes_not_built_yet() -> None:
    # a fresh process: nothing is built, and a class's fields lack their aliases until it is
    code = textwrap.dedent(f"""
        import acp_v2_draft as d
        from acp_runtime.models import compat
        value = {PROMPT!r}
        assert not d.PromptRequest.__pydantic_complete__
        fit = compat.BestFit(d.UnarchiveSessionRequest | d.PromptRequest)
        print(type(fit.refit(value, d.UnarchiveSessionRequest.model_validate(value))).__name__)
        """)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "PromptRequest"


def test_strict_first_refits_what_its_handler_returns(draft: ModuleType) -> None:
    from acp_runtime.models import hooks

    fit = _fit(draft)
    fitted = hooks._strict_first(PROMPT, draft.ListProvidersRequest.model_validate, fit)
    assert type(fitted) is draft.PromptRequest
    plain = hooks._strict_first(PROMPT, draft.ListProvidersRequest.model_validate)
    assert type(plain) is draft.ListProvidersRequest  # no fit: the handler's pick stands


def _hook_calls(draft: ModuleType, monkeypatch: pytest.MonkeyPatch) -> int:
    """How often a forced rebuild of `PromptRequest` runs its completion hook."""
    cls = draft.PromptRequest
    calls: list[type] = []
    with monkeypatch.context() as patch:
        patch.setattr(cls, "__pydantic_on_complete__", classmethod(lambda c: calls.append(c)))
        assert cls.model_rebuild(force=True)
    cls.model_rebuild(force=True)  # the real hook again: later tests see the class as built
    return calls.count(cls)


def test_a_forced_rebuild_of_a_complete_class_runs_the_completion_hook_once(
    draft: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pydantic 2.12 and later skip the hook when forced to rebuild a complete class, 2.11 has none:
    # ours runs it, once. (A first build without pydantic's hook, 2.11's case, is what every model
    # test exercises under `nox -s pydantic`.)
    draft.PromptRequest.model_validate(PROMPT)  # complete before patching
    assert _hook_calls(draft, monkeypatch) == 1


def test_a_forced_rebuild_keeps_the_fast_path_and_the_bytes(draft: ModuleType) -> None:
    cls = draft.PromptRequest
    before = cls.model_validate(PROMPT).model_dump_json(by_alias=True, exclude_unset=True)
    assert cls.model_rebuild(force=True)
    assert type(cls.__pydantic_validator__) is FastPathValidator
    assert cls.model_validate(PROMPT).model_dump_json(by_alias=True, exclude_unset=True) == before


def _lower_bound(requirement: str) -> str:
    match = re.fullmatch(r"pydantic>=(\d+\.\d+)", requirement.split(";")[0].strip())
    assert match, requirement
    return match.group(1)


def test_one_pydantic_lower_bound_is_claimed_and_tested() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (claimed,) = [
        _lower_bound(d) for d in project["project"]["dependencies"] if d.startswith("pydantic")
    ]
    runtime = tomllib.loads((ROOT / "runtime" / "pyproject.toml").read_text(encoding="utf-8"))
    assert runtime["project"]["dependencies"] == [
        f"pydantic>={claimed}"
    ], "the runtime depends on pydantic only"
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    minors = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "PYDANTIC_MINORS" for t in node.targets)
    )
    assert minors[0] == claimed, "the nox matrix must start at pyproject's lower bound"
    assert minors == sorted(minors, key=lambda m: tuple(map(int, m.split("."))))
    for kind, deps in DEPENDENCIES.items():
        assert [_lower_bound(d) for d in deps if d.startswith("pydantic")] == [claimed], kind
