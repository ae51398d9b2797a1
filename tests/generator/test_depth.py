"""Long reference chains generate and import: depth does not limit a schema.

Issue 13 findings: ~125 chained object definitions and 162 chained aliases gave a RecursionError
traceback in the IR builder, and 68 or more chained definitions generated a package that failed
to import (RecursionError at class completion: classes are emitted in name order, and completing
the first built every later one inside the other). Tested with chains of 500.
"""

from __future__ import annotations

import json
from pathlib import Path

from generator_support import Schema, generated_ok, minimal, ping, python_ok

LENGTH = 500


def _object_chain(schema: Schema) -> None:
    """`D000.next: D001`, ..., `D499.next: D500`; the chain's head is used by PingRequest."""
    for i in range(LENGTH):
        schema["$defs"][f"D{i:03d}"] = {"type": "object", "properties": {"next": {"$ref": f"#/$defs/D{i + 1:03d}"}}}
    schema["$defs"][f"D{LENGTH:03d}"] = {"type": "object", "properties": {"end": {"type": "string"}}, "required": ["end"]}
    ping(schema)["properties"]["chain"] = {"$ref": "#/$defs/D000"}


def _alias_chain(schema: Schema) -> None:
    """`A000 = A001`, ..., `A499 = A500 = integer` (plain aliases, `$ref` after `$ref`)."""
    for i in range(LENGTH):
        schema["$defs"][f"A{i:03d}"] = {"$ref": f"#/$defs/A{i + 1:03d}", "description": f"link {i}"}
    schema["$defs"][f"A{LENGTH:03d}"] = {"type": "integer", "minimum": 0}
    ping(schema)["properties"]["alias"] = {"$ref": "#/$defs/A000"}


def _nested_arrays(schema: Schema, depth: int) -> None:
    node: Schema = {"type": "string"}
    for _ in range(depth):
        node = {"type": "array", "items": node}
    ping(schema)["properties"]["nested"] = node


def test_long_chains_generate_and_import(tmp_path: Path) -> None:
    schema = minimal()
    _object_chain(schema)
    _alias_chain(schema)
    _nested_arrays(schema, 60)  # past the 16 one annotation holds: named `PingRequestNestedLevel<N>`
    out = generated_ok(tmp_path, schema)
    deep: object = {"end": "here"}
    for _ in range(150):  # pydantic's JSON parser stops at 200 levels of data
        deep = {"next": deep}
    nested: object = "x"
    for _ in range(60):
        nested = [nested]
    payload = {"bar": "b", "chain": deep, "alias": 7, "nested": nested}
    shown = python_ok(out, f"""
        import json
        import hostile
        from hostile.models import D000, D350, PingRequest
        payload = json.loads({json.dumps(json.dumps(payload))})
        value = PingRequest.from_json(json.dumps(payload))
        assert json.loads(value.to_json()) == payload
        assert isinstance(value.chain, D000) and value.alias == 7
        print(D350.model_validate({{"next": {{"next": {{"end": "e"}}}}}}).to_json())
        try:
            PingRequest.model_validate({{**payload, "alias": -1}})
        except Exception as exc:
            print(type(exc).__name__)
    """)
    assert shown.splitlines() == ['{"next":{"next":{"end":"e"}}}', "ValidationError"]
    source = (out / "hostile" / "models.py").read_text(encoding="utf-8")
    assert "PingRequestNestedLevel16: TypeAlias" in source
