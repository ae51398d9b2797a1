"""Hostile schemas that are valid: the generated package imports and means what the schema says.

Issue 13 findings: `$defs` named `None`/`True`/`False` (became `class None(...)`), a NUL in a
description (written raw into models.py), properties `fooBar`, `foo_bar`, `foo-bar`, `FooBar`
(all became `foo_bar`, three untyped), an ECMA-262 lookahead `pattern` (the package did not
import: Rust's regex engine has no lookaround), and integral floats such as `2.0` where the
schema says `integer` (rejected). One schema carries them all; one generation serves the tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import model_source
from generator_support import Schema, generated_ok, minimal, ping, python_ok

COLLIDING = ("fooBar", "foo_bar", "foo-bar", "FooBar")


def _hostile() -> Schema:
    schema = minimal()
    for name in ("None", "True", "False", "Exception"):
        schema["$defs"][name] = {"type": "object", "properties": {"value": {"type": "string"}}}
    request = ping(schema)
    request["description"] = (
        "Holds a NUL \x00, a form feed \x0c and a line separator \u2028 as text."
    )
    props = request["properties"]
    props.update({wire: {"type": "string"} for wire in COLLIDING})
    props["word"] = {"type": "string", "pattern": "^(?!x)[a-z]+$"}
    props["code"] = {"type": "string", "pattern": "^\\d{3}$"}
    props["version"] = {"type": "integer", "minimum": 0, "maximum": 65535}
    props["count"] = {"type": "integer"}
    props["ratio"] = {"type": "number"}
    props["pick"] = {"$ref": "#/$defs/None"}
    return schema


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile schema generated into a temporary directory."""
    return generated_ok(tmp_path_factory.mktemp("hostile"), _hostile())


def _check(out: Path, payload: dict[str, Any]) -> dict[str, Any]:
    """Validate `payload` as PingRequest in the generated package: {"ok": to_json} or {"error": type}."""
    code = f"""
        import json
        from hostile import PingRequest
        try:
            value = PingRequest.from_json({json.dumps(json.dumps(payload))})
        except Exception as exc:
            print(json.dumps({{"error": type(exc).__name__}}))
        else:
            print(json.dumps({{"ok": json.loads(value.to_json())}}))
    """
    result: dict[str, Any] = json.loads(python_ok(out, code))
    return result


def test_python_names_become_valid_class_names(out: Path) -> None:
    shown = python_ok(
        out,
        """
        import builtins, hostile.models as m
        print(m.None_.__name__, m.True_.__name__, m.False_.__name__, m.Exception_.__name__)
        assert not hasattr(m, "Exception") or m.Exception is builtins.Exception
        print(m.PingRequest(bar="b", pick={"value": "v"}).pick.__class__.__name__)
    """,
    )
    assert shown.split() == ["None_", "True_", "False_", "Exception_", "None_"]


def test_control_characters_in_a_description_are_escaped(out: Path) -> None:
    source = model_source(out / "hostile")
    assert "\x00" not in source and "\x0c" not in source and "\u2028" not in source
    doc = python_ok(out, "import hostile; print(repr(hostile.PingRequest.__doc__))")
    assert doc.strip() == repr(
        "Holds a NUL \x00, a form feed \x0c and a line separator \u2028 as text."
    )


def test_colliding_property_names_are_distinct_and_typed(out: Path) -> None:
    names = python_ok(
        out,
        """
        from hostile import PingRequest
        for name, field in PingRequest.model_fields.items():
            print(field.alias or name, name)
    """,
    )
    mapping = dict(line.split() for line in names.splitlines())
    assert {mapping[w] for w in COLLIDING} == {"foo_bar", "foo_bar_2", "foo_bar_3", "foo_bar_4"}
    assert mapping["foo_bar"] == "foo_bar"  # the wire name already spelled so keeps it
    payload = {"bar": "b", **{wire: f"v{i}" for i, wire in enumerate(COLLIDING)}}
    assert _check(out, payload) == {"ok": payload}
    for wire in COLLIDING:
        assert _check(out, {"bar": "b", wire: 5}) == {"error": "ValidationError"}, wire


def test_colliding_names_do_not_depend_on_key_order(tmp_path: Path, out: Path) -> None:
    schema = _hostile()
    props = ping(schema)["properties"]
    ping(schema)["properties"] = dict(reversed(list(props.items())))
    again = generated_ok(tmp_path, schema)

    def lines(root: Path) -> list[str]:
        source = model_source(root / "hostile")
        return sorted(line.strip() for line in source.splitlines() if "foo_bar" in line)

    assert lines(again) == lines(out)


def test_ecma_lookahead_pattern_works(out: Path) -> None:
    assert "ok" in _check(out, {"bar": "b", "word": "abc"})
    assert _check(out, {"bar": "b", "word": "xbc"}) == {"error": "ValidationError"}
    assert _check(out, {"bar": "b", "word": "abc\n"}) == {
        "error": "ValidationError"
    }  # `$`: end of input


def test_ecma_digit_class_is_ascii(out: Path) -> None:
    assert "ok" in _check(out, {"bar": "b", "code": "123"})
    assert _check(out, {"bar": "b", "code": "١٢٣"}) == {
        "error": "ValidationError"
    }  # Arabic-Indic digits


def test_integral_floats_are_integers(out: Path) -> None:
    """`2.0` is an integer in JSON Schema; it parses as the int 2 and is written back as `2`."""
    assert _check(out, {"bar": "b", "version": 2.0, "count": -7.0}) == {
        "ok": {"bar": "b", "version": 2, "count": -7}
    }
    assert _check(out, {"bar": "b", "version": 2}) == {"ok": {"bar": "b", "version": 2}}
    for bad in (2.5, "2", True, -1.0, 65536.0):
        assert _check(out, {"bar": "b", "version": bad}) == {"error": "ValidationError"}, bad
    assert _check(out, {"bar": "b", "ratio": 2.0}) == {
        "ok": {"bar": "b", "ratio": 2.0}
    }  # `number` keeps its text
    typed = python_ok(
        out,
        """
        from hostile import PingRequest
        value = PingRequest.from_json('{"bar": "b", "count": 3.0}')
        print(type(value.count).__name__, PingRequest.model_json_schema()["properties"]["count"]["type"])
    """,
    )
    assert typed.split() == ["int", "integer"]


@pytest.mark.usefixtures("shared_dir")  # the pinned draft, read from ../shared
def test_integral_floats_in_the_pinned_draft(tmp_path: Path) -> None:
    """The draft's own integer fields (`protocolVersion`, a uint16) take `2.0`."""
    from generator_support import draft

    out = generated_ok(tmp_path, draft(), package="draft_pkg")
    shown = python_ok(
        out,
        """
        from draft_pkg import InitializeRequest
        value = InitializeRequest.from_json('{"protocolVersion": 2.0, "info": {"name": "n", "version": "1"}}')
        print(value.protocol_version, value.to_json())
    """,
    )
    assert shown.strip() == '2 {"protocolVersion":2,"info":{"name":"n","version":"1"}}'
