"""A misspelled value of a closed enum, built into a model field, raises a `ValidationError`
whose location names that field (cases generated from the IR: every field of the draft typed by
a closed enum), directly and nested in the structure that holds it."""

from __future__ import annotations

from typing import Any

import pytest
from bindings_support import build_kwargs, enum_sites, instances_by_class, package, protocol
from pydantic import ValidationError

from acp_codegen.ir.nodes import Enum

PKG = "acp_v2_draft"
SITES = [
    (enum, struct, py, wire)
    for enum, sites in enum_sites(PKG, open_=False).items()
    for struct, py, wire in sites
]


def _misspelled(enum_name: str) -> str:
    enum = protocol(PKG).by_def_name(enum_name) or next(
        d for d in protocol(PKG).definitions if d.name == enum_name
    )
    assert isinstance(enum, Enum) and not enum.open
    known = enum.values[0].value
    return known[0] + known[2] + known[1] + known[3:]  # "object" -> "bojcet"


def test_the_draft_has_closed_enum_fields() -> None:
    assert SITES, "no field typed by a closed enum: the test below checks nothing"


@pytest.mark.parametrize("site", SITES, ids=[f"{s.name}.{wire}" for _, s, _, wire in SITES])
def test_a_misspelled_closed_enum_value_names_the_field(site: tuple[str, Any, str, str]) -> None:
    enum_name, struct, py, wire = site
    cls = getattr(package(PKG), struct.name)
    values = instances_by_class(PKG).get(cls)
    assert values, f"no schema instance of {struct.name}"
    kwargs = build_kwargs(cls.from_dict(values[0]))
    assert cls(**kwargs).to_dict() == cls.from_dict(values[0]).to_dict()  # the correct value builds
    bad = _misspelled(enum_name)
    for name in (py, wire):  # Python name and wire name
        with pytest.raises(ValidationError) as caught:
            cls(**{k: v for k, v in kwargs.items() if k != py}, **{name: bad})
        assert [e["loc"] for e in caught.value.errors()] == [(name,)], caught.value
    with pytest.raises(ValidationError) as caught:
        cls.from_dict({**values[0], wire: bad})  # closed: no leniency on the wire either
    assert caught.value.errors()[0]["loc"] == (wire,)


def test_a_misspelled_closed_enum_value_nested_names_the_path() -> None:
    acp = package(PKG)
    built = acp.ElicitationFormModeRequest(
        request_id="r", requested_schema={"type": "object", "properties": {}}
    )
    assert built.requested_schema.type == "object"
    with pytest.raises(ValidationError) as caught:
        acp.ElicitationFormModeRequest(
            request_id="r", requested_schema={"type": "objcet", "properties": {}}
        )
    assert [e["loc"] for e in caught.value.errors()] == [("requested_schema", "type")]
