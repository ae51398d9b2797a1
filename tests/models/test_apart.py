"""`Apart[T]` (the runtime's `acp_runtime.models.apart`): validated and written
exactly as `T`, by `T`'s own adapter, built at first use; errors at their own locations; the
options of a dump call (`by_alias`, `exclude_none`, JSON mode, context) reach the values inside.
Deep schemas end to end: `tests/generator/test_depth.py`."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
from pydantic import (
    BaseModel,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

pytest_plugins = ["models_fixtures"]  # draft, stable, v1, pinned


@pytest.fixture(scope="module")
def apart(draft: ModuleType) -> ModuleType:
    """The runtime's `acp_runtime.models.apart`."""
    return importlib.import_module("acp_runtime.models.apart")


def _marker(annotation: Any) -> Any:
    (marker,) = annotation.__metadata__
    return marker


def test_values_and_errors_are_those_of_the_type(apart: ModuleType, draft: ModuleType) -> None:
    annotation = apart.Apart[list[list[draft.ContentBlock]]]
    marker = _marker(annotation)
    adapter = TypeAdapter(list[annotation])
    assert marker._adapter is None  # nothing built until a value goes through
    wire = [[[{"type": "text", "text": "hi", "annotations": None}]]]
    value = adapter.validate_python(wire)
    assert marker._adapter is not None
    assert type(value[0][0][0]).__name__ == "ContentBlockText"
    assert adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True) == wire
    assert (
        adapter.dump_json(value, by_alias=True, exclude_none=True)
        == b'[[[{"type":"text","text":"hi"}]]]'
    )
    assert (
        adapter.validate_json(adapter.dump_json(value, by_alias=True, exclude_unset=True)) == value
    )
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python([[[{"type": "text"}]], [["x"]]])
    assert [e["loc"][:3] for e in caught.value.errors()] == [(0, 0, 0), (1, 0, 0)]
    assert caught.value.errors()[0]["type"] == "missing"


def test_context_reaches_validators_inside(apart: ModuleType) -> None:
    class Leaf(BaseModel):
        n: int

        @field_validator("n")
        @classmethod
        def scaled(cls, value: int, info: ValidationInfo) -> int:
            return value * (info.context or {}).get("scale", 1)

    adapter = TypeAdapter(apart.Apart[list[Leaf]])
    assert adapter.validate_python([{"n": 2}], context={"scale": 10}) == [Leaf(n=20)]


def test_repr_does_not_walk_the_chain(apart: ModuleType) -> None:
    inner: Any = str
    for _ in range(2000):  # a repr of the whole chain would be a RecursionError
        inner = apart.Apart[list[inner]]
    assert repr(_marker(inner)) == "Apart[list[...]]"
    shallow: Any = str
    value: Any = "x"
    for _ in range(100):  # each level apart is a few frames of validation (the IR puts one in 64)
        shallow, value = apart.Apart[list[shallow]], [value]
    assert TypeAdapter(shallow).validate_python(value) == value
