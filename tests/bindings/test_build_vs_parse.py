"""Parsing is lenient, building is strict, at every leniency site of the draft (cases generated
from the IR): the same bad value that parsing repairs (drops the field, or the bad item) makes
building raise a `ValidationError` naming the field. Parsing takes wire names only."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from bindings_support import build_kwargs, instances_by_class, leniency_sites, package, protocol
from pydantic import BaseModel, ValidationError

PKG = "acp_v2_draft"
BAD_VALUES: tuple[Any, ...] = (12345.5, "?not a valid value?", True, [{"?bad": 1}], {"?bad": [1]})


def _valid(cls: type[BaseModel], wire: str, rule: str) -> tuple[dict[str, Any], BaseModel] | None:
    """A wire instance that parses into `cls` (with a non-empty list at `wire` for
    `skip_invalid_items`)."""
    for value in instances_by_class(PKG).get(cls, ()):
        if rule == "skip_invalid_items" and not value.get(wire):
            continue
        return value, cls.from_dict(value)  # type: ignore[attr-defined]
    return None


def _names_field(exc: ValidationError, py: str, wire: str) -> bool:
    return any(e["loc"] and e["loc"][0] in (py, wire) for e in exc.errors())


def _sites() -> list[tuple[Any, str, str, str, bool]]:
    """The sites of every struct that values are made of (base structs are checked through the
    structs that extend them)."""
    return [s for s in leniency_sites(PKG) if s[0].role != "base"]


@pytest.mark.parametrize(
    "site", _sites(), ids=[f"{s.name}.{wire}:{rule}" for s, _, wire, rule, _ in _sites()]
)
def test_a_repaired_value_is_an_error_when_built(site: tuple[Any, str, str, str]) -> None:
    struct, py, wire, rule, required = site
    cls = getattr(package(PKG), struct.name)
    found = _valid(cls, wire, rule)
    if found is None:
        pytest.skip(f"no schema instance of {struct.name}")  # counted by the coverage test below
    value, parsed = found
    kwargs = build_kwargs(parsed)
    if rule == "default_on_null":
        bads: tuple[Any, ...] = (None,)
    elif rule == "skip_invalid_items":
        bads = tuple([*value[wire], bad] for bad in BAD_VALUES)
    else:
        bads = BAD_VALUES
    for bad in bads:
        wire_bad = {**copy.deepcopy(value), wire: bad}
        if required and rule == "default_on_error":
            # dropping a required field leaves it missing: an error when parsed too
            with pytest.raises(ValidationError):
                cls.from_dict(wire_bad)
            with pytest.raises(ValidationError) as caught:
                cls(**{**kwargs, py: bad})
            assert _names_field(caught.value, py, wire), caught.value
            return
        repaired = cls.from_dict(wire_bad)  # parsing: never an error at a leniency site
        if rule == "skip_invalid_items":
            kept = repaired.to_dict().get(wire)
            if kept is not None and len(kept) == len(bad):
                continue  # the "bad" item was valid after all
            assert kept == parsed.to_dict()[wire], (struct.name, wire)
        else:
            if wire in repaired.to_dict():
                continue  # the value was valid here (or null is allowed): not a repair
            assert py not in repaired.model_fields_set
        with pytest.raises(ValidationError) as caught:
            cls(**{**kwargs, py: bad})
        assert _names_field(caught.value, py, wire), caught.value
        return
    pytest.skip(f"{struct.name}.{wire} accepts every probe value")


def test_most_leniency_sites_are_exercised() -> None:
    """The parametrized test above covers the sites it can build instances for: nearly all."""
    sites = _sites()
    classes = instances_by_class(PKG)
    with_instances = [s for s in sites if getattr(package(PKG), s[0].name) in classes]
    assert len(sites) > 50 and len(with_instances) >= 0.9 * len(sites), len(with_instances) / len(
        sites
    )


def test_parsing_takes_wire_names_only_and_building_python_names() -> None:
    acp = package(PKG)
    wire = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        },
    }
    assert acp.UpdateSessionNotification.from_dict(wire).to_dict() == wire
    with pytest.raises(ValidationError) as caught:
        acp.UpdateSessionNotification.from_dict(
            {**wire, "session_id": "s", "sessionId": None} | {"sessionId": None}
        )
    with pytest.raises(ValidationError) as caught:
        acp.UpdateSessionNotification.from_dict({"session_id": "s", "update": wire["update"]})
    assert caught.value.errors()[0]["loc"] == ("sessionId",)
    built = acp.UpdateSessionNotification(
        session_id="s",
        update=acp.SessionUpdateAgentMessageChunk(
            message_id="m", content=acp.ContentBlockText(text="hi")
        ),
    )
    assert built.to_dict() == wire


def test_the_issue_case_status_complted() -> None:
    """The report that started it: a misspelled status silently became `None` when built."""
    acp = package(PKG)
    with pytest.raises(ValidationError) as caught:
        acp.ToolCallUpdate(tool_call_id="t", status="complted")
    assert caught.value.errors()[0]["loc"] == ("status",)
    parsed = acp.ToolCallUpdate.from_json(
        '{"toolCallId": "t", "status": 7}'
    )  # a wire value: repaired
    assert parsed.status is None and parsed.to_dict() == {"toolCallId": "t"}


def test_building_checks_types_closed_enums_and_required_fields_at_any_depth() -> None:
    acp = package(PKG)
    cases = [
        (lambda: acp.ToolCallUpdate(tool_call_id=5), ("tool_call_id",)),
        (lambda: acp.ToolCallUpdate(), ("toolCallId",)),
        (
            lambda: acp.UpdateSessionNotification(
                session_id="s",
                update={
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": {"type": "text", "text": 3},
                },
            ),
            ("update",),
        ),
        (
            lambda: acp.PromptRequest(
                session_id="s", prompt=[acp.ContentBlockText(text="a"), {"type": "text"}]
            ),
            ("prompt", 1),
        ),
    ]
    for make, loc in cases:
        with pytest.raises(ValidationError) as caught:
            make()
        assert caught.value.errors()[0]["loc"][: len(loc)] == loc
    closed = [
        d for d in protocol(PKG).definitions if getattr(d, "kind", "") == "enum" and not d.open
    ]
    for enum in closed:
        with pytest.raises(ValidationError):
            from pydantic import TypeAdapter

            TypeAdapter(getattr(acp, enum.name)).validate_python("?misspelled?")


def test_model_copy_update_is_validated_like_building() -> None:
    acp = package(PKG)
    parsed = acp.ToolCallUpdate.from_json('{"toolCallId": "t", "status": "future_status", "_x": 1}')
    copied = parsed.model_copy(update={"title": "T"})
    assert copied.to_dict() == {"toolCallId": "t", "status": "future_status", "_x": 1, "title": "T"}
    with pytest.raises(ValidationError) as caught:
        parsed.model_copy(update={"status": "complted"})
    assert caught.value.errors()[0]["loc"] == ("status",)
    with pytest.raises(ValidationError):
        parsed.model_copy(update={"title": 3})
