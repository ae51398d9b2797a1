"""The emitter rule on values the program builds, for every open enum and every open union of
each package (cases from the IR): a value or tag the schema does not name must start with `_`;
a reserved one raises, unless it is a received value passed on (which round-trips unchanged)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bindings_support import (
    PACKAGES,
    enum_sites,
    instances,
    instances_by_class,
    open_unions,
    package,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

RESERVED = "future_value_zz"
EXTENSION = "_vendor.value_zz"


def _kwargs(model: BaseModel) -> dict[str, Any]:
    return {
        **{n: getattr(model, n) for n in model.model_fields_set},
        **(model.__pydantic_extra__ or {}),
    }


def _enum_cases() -> list[tuple[str, str]]:
    return [(pkg, enum) for pkg in PACKAGES for enum in enum_sites(pkg)]


@pytest.mark.parametrize(("pkg", "enum"), _enum_cases(), ids=[f"{p}.{e}" for p, e in _enum_cases()])
def test_open_enum_values_follow_the_emitter_rule(pkg: str, enum: str) -> None:
    acp = package(pkg)
    cls = getattr(acp, enum)
    assert cls(EXTENSION).is_extension and cls(RESERVED).is_reserved
    sites = enum_sites(pkg)[enum]
    by_class = instances_by_class(pkg)
    site = next(
        ((s, py, wire) for s, py, wire in sites if by_class.get(getattr(acp, s.name))), None
    )
    if site is None:
        # only a union tag (checked below) or not in any struct field: the enum itself is checked
        assert not sites or all(getattr(acp, s.name) not in by_class for s, _, _ in sites)
        pytest.skip(f"{enum}: no field site with a schema instance")
    struct, py, wire = site
    model_cls = getattr(acp, struct.name)
    value = by_class[model_cls][0]
    parsed = model_cls.from_dict(value)
    kwargs = _kwargs(parsed)
    with pytest.raises(ValidationError) as caught:
        model_cls(**{**kwargs, py: RESERVED})
    assert any(
        e["loc"][:1] == (py,) and e["type"] == "acp_reserved_value" for e in caught.value.errors()
    )
    with pytest.raises(ValidationError):
        model_cls(**{**kwargs, py: cls(RESERVED)})  # made in Python, not received
    built = model_cls(**{**kwargs, py: EXTENSION})
    assert built.to_dict()[wire] == EXTENSION
    for known in cls.known_values():
        assert model_cls(**{**kwargs, py: known}).to_dict()[wire] == known
    received = model_cls.from_dict({**value, wire: RESERVED})
    passed_on = model_cls(**_kwargs(received))
    assert json.loads(passed_on.to_json()) == json.loads(received.to_json())
    assert passed_on.to_dict()[wire] == RESERVED


def _union_cases() -> list[tuple[str, str]]:
    return [(pkg, u.name) for pkg in PACKAGES for u in open_unions(pkg)]


@pytest.mark.parametrize(
    ("pkg", "union"), _union_cases(), ids=[f"{p}.{u}" for p, u in _union_cases()]
)
def test_custom_union_tags_follow_the_emitter_rule(pkg: str, union: str) -> None:
    acp = package(pkg)
    spec = next(u for u in open_unions(pkg) if u.name == union)
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(acp, union))
    # (a union split by scope keeps unknown variants in a class per scope: Unknown<Union>...)
    own = [instances(pkg).valid(spec.def_name, seed) for seed in range(40)] if spec.def_name else []
    samples = [v for v in own if isinstance(v, dict)] + [
        v for values in instances_by_class(pkg).values() for v in values if spec.tag_wire in v
    ]
    value = next(
        (v for v in samples if _parses_as(adapter, {**v, spec.tag_wire: RESERVED}, spec.unknown)),
        {spec.tag_wire: RESERVED},
    )
    received = adapter.validate_python({**value, spec.tag_wire: RESERVED})
    assert type(received).__name__.startswith(spec.unknown), type(received)
    unknown_cls = type(received)
    kwargs = _kwargs(received)
    with pytest.raises(ValidationError) as caught:
        unknown_cls(**{**kwargs, spec.tag_py: RESERVED})
    assert any(e["loc"][:1] == (spec.tag_py,) for e in caught.value.errors())
    built = unknown_cls(**{**kwargs, spec.tag_py: EXTENSION})
    assert built.to_dict()[spec.tag_wire] == EXTENSION
    passed_on = unknown_cls(**kwargs)  # the received tag is passed on as it came
    assert (
        passed_on.to_dict() == received.to_dict() and passed_on.to_dict()[spec.tag_wire] == RESERVED
    )


def _parses_as(adapter: TypeAdapter[Any], value: dict[str, Any], name: str) -> bool:
    try:
        return type(adapter.validate_python(value)).__name__.startswith(name)
    except ValidationError:
        return False


def test_every_open_enum_is_checked_through_a_field_or_a_union_tag() -> None:
    for pkg in PACKAGES:
        acp = package(pkg)
        by_class = instances_by_class(pkg)
        tags = {u.tag_enum for u in open_unions(pkg)}
        for enum, sites in enum_sites(pkg).items():
            field = any(getattr(acp, s.name) in by_class for s, _, _ in sites)
            assert field or enum in tags or not sites, f"{pkg}.{enum}"


def test_a_received_unknown_update_round_trips_through_a_built_notification() -> None:
    acp = package("acp_v2_draft")
    wire = {"sessionId": "s", "update": {"sessionUpdate": "future_update", "x": [1, {"y": None}]}}
    received = acp.UpdateSessionNotification.from_dict(wire)
    forwarded = acp.UpdateSessionNotification(session_id="other", update=received.update)
    assert forwarded.to_dict() == {**wire, "sessionId": "other"}
    with pytest.raises(ValidationError):
        acp.UpdateSessionNotification(session_id="s", update={"sessionUpdate": "future_update"})
    ok = acp.UpdateSessionNotification(
        session_id="s", update={"sessionUpdate": "_vendor/update", "k": 1}
    )
    assert ok.to_dict()["update"] == {"sessionUpdate": "_vendor/update", "k": 1}


@pytest.mark.parametrize(
    "pkg",
    [p for p in PACKAGES if hasattr(package(p), "Role") and hasattr(package(p), "Annotations")],
)
def test_an_open_enum_inside_an_array_follows_the_emitter_rule(pkg: str) -> None:
    # `Role` appears only as array items (`Annotations.audience`), which the field-site cases above
    # do not reach; the rule holds per item, with the item's index in the error.
    acp = package(pkg)
    if acp.Annotations.from_dict({"audience": [RESERVED]}).to_dict() != {"audience": [RESERVED]}:
        pytest.skip(
            f"{pkg}: the schema closes `Role` (an unknown item is not kept: no emitter rule)"
        )
    with pytest.raises(ValidationError) as caught:
        acp.Annotations(audience=["user", RESERVED])
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("audience", 1), "acp_reserved_value")
    ]
    assert acp.Annotations(audience=["user", EXTENSION]).to_dict() == {
        "audience": ["user", EXTENSION]
    }
    received = acp.Annotations.from_dict({"audience": [RESERVED]})
    assert acp.Annotations(**_kwargs(received)).to_dict() == {"audience": [RESERVED]}
