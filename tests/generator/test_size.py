"""Enums and unions of any size: generated in time linear in their size, or one error line.

Issue 32 findings: an inline enum of 3,000 values or more was a RecursionError traceback
(`Literal["a"] | Literal["b"] | ...` nests one level per value), and 100,000 values were still
running after 300 s (duplicates were weeded out by comparing each value with every other one).
Literal values now share one flat `Literal[...]` and options are de-duplicated by a set; a union
of more than `MAX_UNION_OPTIONS` options that are not literals (classes, aliases: each one a `|`
operand the formatter and the parser recurse through) is a one-line error.

No timing assertions: each run is bounded by a subprocess timeout a quadratic run cannot meet.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from generator_support import (
    Schema,
    assert_one_error,
    generate,
    generated_ok,
    minimal,
    ping,
    python_ok,
)

from acp_codegen.ir.types import MAX_UNION_OPTIONS

VALUES = 100_000


def _schema(level: dict[str, object], name: str | None = None) -> Schema:
    """`minimal()` with a property `level` (inline, or `$ref` to the definition `name`)."""
    schema = minimal()
    if name is None:
        ping(schema)["properties"]["level"] = level
    else:
        schema["$defs"][name] = level
        ping(schema)["properties"]["level"] = {"$ref": f"#/$defs/{name}"}
    return schema


def _objects(count: int) -> dict[str, object]:
    """A union of `count` objects told apart by `k` (a tagged union)."""
    return {
        "anyOf": [
            {"type": "object", "properties": {"k": {"const": f"v{i}"}}, "required": ["k"]}
            for i in range(count)
        ]
    }


def test_an_inline_enum_of_100000_values(tmp_path: Path) -> None:
    out = generated_ok(
        tmp_path, _schema({"type": "string", "enum": [f"v{i}" for i in range(VALUES)]})
    )
    printed = python_ok(
        out,
        "import hostile.models as m\n"
        f"print(m.PingRequest.model_validate({{'bar': 'x', 'level': 'v{VALUES - 1}'}}).level)\n"
        "try:\n"
        "    m.PingRequest.model_validate({'bar': 'x', 'level': 'nope'})\n"
        "except Exception as e:\n"
        "    print(type(e).__name__)\n",
    )
    assert printed.split() == [f"v{VALUES - 1}", "ValidationError"]


@pytest.mark.slow  # nox -s slow / interop: a variant the CI budget leaves out
def test_an_open_enum_of_100000_values(tmp_path: Path) -> None:
    options: list[dict[str, object]] = [{"const": f"v{i}", "type": "string"} for i in range(VALUES)]
    out = generated_ok(tmp_path, _schema({"anyOf": [*options, {"type": "string"}]}, "Level"))
    printed = python_ok(
        out,
        "import hostile.models as m\n"
        "from hostile.enums import Level\n"
        "print(m.PingRequest.model_validate({'bar': 'x', 'level': 'v99999'}).level == Level.V99999)\n"
        "print(m.PingRequest.model_validate({'bar': 'x', 'level': 'future'}).model_dump(mode='json')['level'])\n",
    )
    assert printed.split() == ["True", "future"]


def test_a_mixed_union_keeps_one_literal_and_literal_kinds(tmp_path: Path) -> None:
    """`1` and `True` compare equal in Python but are two JSON values: both stay."""
    level = {"anyOf": [{"const": 1}, {"type": "string"}, {"const": True}, {"const": "a"}]}
    out = generated_ok(tmp_path, _schema(level))
    printed = python_ok(
        out,
        "import hostile.models as m\n"
        "for v in (1, True, 'a', 'free'):\n"
        "    print(repr(m.PingRequest.model_validate({'bar': 'x', 'level': v}).level))\n",
    )
    assert printed.split() == ["1", "True", "'a'", "'free'"]
    source = next((out / "hostile" / "_models").glob("ping.py")).read_text()
    assert 'Literal[1, True, "a"]' in source


@pytest.mark.slow  # nox -s slow / interop: a variant the CI budget leaves out
def test_a_tagged_union_at_the_bound(tmp_path: Path) -> None:
    out = generated_ok(tmp_path, _schema(_objects(MAX_UNION_OPTIONS), "Level"))
    printed = python_ok(
        out,
        "import hostile.models as m\nprint(type(m.PingRequest.model_validate({'bar': 'x', 'level': {'k': 'v999'}}).level).__name__)",
    )
    assert printed.strip() == "LevelV999"


def test_a_union_past_the_bound_is_one_error_line(tmp_path: Path) -> None:
    run, out = generate(tmp_path, _schema(_objects(MAX_UNION_OPTIONS + 1), "Level"))
    assert_one_error(
        run,
        "union-too-large",
        "hostile.json#/$defs/Level:",
        f"{MAX_UNION_OPTIONS + 1:,} options",
        out=out,
    )


def test_an_untagged_inline_union_past_the_bound_is_one_error_line(tmp_path: Path) -> None:
    level = {
        "anyOf": [
            {"type": "array", "items": {"const": f"v{i}"}} for i in range(MAX_UNION_OPTIONS + 1)
        ]
    }
    run, out = generate(tmp_path, _schema(level))
    assert_one_error(
        run, "union-too-large", "hostile.json#/$defs/PingRequest/properties/level:", out=out
    )
