"""Long reference chains generate and import: depth does not limit a schema.

Issue 13 findings: ~125 chained object definitions and 162 chained aliases gave a RecursionError
traceback in the IR builder, and 68 or more chained definitions generated a package that failed
to import (RecursionError at class completion: classes are emitted in name order, and completing
the first built every later one inside the other); 324 nested arrays were a RecursionError in
the IR builder, and a hundred or two, inline or through aliases, one when the package was imported
(typing and pydantic evaluate `list[list[...]]` recursively). Tested with chains of 500: classes,
aliases, arrays, maps and unions nested inline and through aliases.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import model_source
from generator_support import Schema, generated_ok, minimal, ping, python_ok

LENGTH = 500
TREE = 150


def _object_chain(schema: Schema) -> None:
    """`D000.next: D001`, ..., `D499.next: D500`; the chain's head is used by PingRequest."""
    for i in range(LENGTH):
        schema["$defs"][f"D{i:03d}"] = {
            "type": "object",
            "properties": {"next": {"$ref": f"#/$defs/D{i + 1:03d}"}},
        }
    schema["$defs"][f"D{LENGTH:03d}"] = {
        "type": "object",
        "properties": {"end": {"type": "string"}},
        "required": ["end"],
    }
    ping(schema)["properties"]["chain"] = {"$ref": "#/$defs/D000"}


def _alias_chain(schema: Schema) -> None:
    """`A000 = A001`, ..., `A499 = A500 = integer` (plain aliases, `$ref` after `$ref`)."""
    for i in range(LENGTH):
        schema["$defs"][f"A{i:03d}"] = {
            "$ref": f"#/$defs/A{i + 1:03d}",
            "description": f"link {i}",
        }
    schema["$defs"][f"A{LENGTH:03d}"] = {"type": "integer", "minimum": 0}
    ping(schema)["properties"]["alias"] = {"$ref": "#/$defs/A000"}


def _nested_arrays(schema: Schema, depth: int, name: str = "nested") -> None:
    node: Schema = {"type": "string"}
    for _ in range(depth):
        node = {"type": "array", "items": node}
    ping(schema)["properties"][name] = node


def _deep_containers(schema: Schema) -> None:
    """Arrays and maps nested `LENGTH` deep, unions of arrays `TREE` deep, inline and through `$ref` aliases, and 180
    arrays deep (what pydantic's JSON parser and writer reach, about 200) for the wire.
    """
    _nested_arrays(schema, LENGTH, "arrays")
    _nested_arrays(schema, 180, "wire")
    for i in range(LENGTH):
        schema["$defs"][f"L{i:03d}"] = {
            "type": "array",
            "items": {"$ref": f"#/$defs/L{i + 1:03d}"},
        }
    schema["$defs"][f"L{LENGTH:03d}"] = {"type": "string"}
    maps: Schema = {"type": "string"}
    tree: Schema = {"type": "string"}
    for _ in range(LENGTH):
        maps = {"type": "object", "additionalProperties": maps}
    for _ in range(TREE):  # four JSON levels each: the schema's own JSON stays under Python's limit
        tree = {"anyOf": [{"type": "integer"}, {"type": "array", "items": tree}]}
    ping(schema)["properties"].update(
        {"through": {"$ref": "#/$defs/L000"}, "maps": maps, "tree": tree}
    )


def test_long_chains_generate_and_import(tmp_path: Path) -> None:
    schema = minimal()
    _object_chain(schema)
    _alias_chain(schema)
    _nested_arrays(
        schema, 60
    )  # past the 16 one annotation holds: named `PingRequestNestedLevel<N>`
    out = generated_ok(tmp_path, schema)
    deep: object = {"end": "here"}
    for _ in range(150):  # pydantic's JSON parser stops at 200 levels of data
        deep = {"next": deep}
    nested: object = "x"
    for _ in range(60):
        nested = [nested]
    payload = {"bar": "b", "chain": deep, "alias": 7, "nested": nested}
    shown = python_ok(
        out,
        f"""
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
    """,
    )
    assert shown.splitlines() == ['{"next":{"next":{"end":"e"}}}', "ValidationError"]
    source = model_source(out / "hostile")
    assert "PingRequestNestedLevel16: TypeAlias" in source


def test_a_long_chain_in_a_group_of_its_own_builds_from_a_class_of_another(tmp_path: Path) -> None:
    """The chain's head is shared (PingRequest and PingResponse name it), so the chain is a group
    of its own: a first use of PingRequest, and `complete_models` of PingRequest's group, walk
    the chain in the chain's module (where its forward references resolve), not in PingRequest's;
    a class first used after the chain is built gets room for the walk through the chain."""
    schema = minimal()
    _object_chain(schema)
    schema["$defs"]["PingResponse"]["properties"]["chain"] = {"$ref": "#/$defs/D000"}
    out = generated_ok(tmp_path, schema)
    assert (out / "hostile" / "_models" / "d000.py").is_file()
    deep: object = {"end": "here"}
    for _ in range(150):
        deep = {"next": deep}
    shown = python_ok(
        out,
        f"""
        import json, sys
        import hostile
        from acp_runtime.models import complete_models
        from hostile.models import PingRequest, PingResponse
        payload = {{"bar": "b", "chain": json.loads({json.dumps(json.dumps(deep))})}}
        print(json.loads(PingRequest.from_json(json.dumps(payload)).to_json()) == payload)
        complete_models(PingResponse.__module__)
        print(PingResponse.__pydantic_complete__)
        print(PingResponse.model_validate({{"chain": payload["chain"]}}).chain is not None)
    """,
    )
    assert shown.splitlines() == ["True", "True", "True"]
    # a second class first used after the chain is built (a walk through built classes' schemas)
    second = python_ok(
        out,
        f"""
        import json
        from hostile.models import PingRequest, PingResponse
        chain = json.loads({json.dumps(json.dumps(deep))})
        PingRequest.model_validate({{"bar": "b", "chain": chain}})
        print(PingResponse.model_validate({{"chain": chain}}).to_json() == json.dumps({{"chain": chain}}, separators=(",", ":")))
    """,
    )
    assert second.strip() == "True"


def test_deep_arrays_maps_and_unions_generate_import_and_validate(
    tmp_path: Path,
) -> None:
    """Deeper than one evaluation can go, an alias is evaluated apart (`Apart[...]`): the
    package imports, values validate and write back exactly as the schema says at every depth,
    and an error deep inside is reported at its own location."""
    schema = minimal()
    _deep_containers(schema)
    out = generated_ok(tmp_path, schema)
    shown = python_ok(
        out,
        f"""
        import json
        import sys
        from pydantic import ValidationError
        from hostile.models import PingRequest
        sys.setrecursionlimit(1000)  # the default: nothing here may need more

        def nest(depth, leaf, wrap=lambda v: [v]):
            for _ in range(depth):
                leaf = wrap(leaf)
            return leaf

        N, TREE = {LENGTH}, {TREE}
        payload = {{
            "bar": "b",
            "arrays": nest(N, "a"),
            "through": nest(N, "t"),
            "maps": nest(N, "m", lambda v: {{"k": v}}),
            "tree": nest(TREE - 1, ["leaf"], lambda v: [v, 5]),
        }}
        value = PingRequest.model_validate(payload)
        assert value.model_dump(by_alias=True, exclude_unset=True) == payload
        wire = json.dumps({{"bar": "b", "wire": nest(180, "w")}}, separators=(",", ":"))
        assert PingRequest.model_validate_json(wire).to_json() == wire
        for field, bad in [("arrays", nest(N, 1)), ("through", nest(N, 2)), ("maps", nest(N, 3, lambda v: {{"k": v}}))]:
            try:
                PingRequest.model_validate({{"bar": "b", field: bad}})
            except ValidationError as exc:
                (error,) = exc.errors()
                print(field, len(error["loc"]), error["loc"][-1], error["type"])
    """,
    )
    assert shown.splitlines() == [
        f"arrays {LENGTH + 1} 0 string_type",
        f"through {LENGTH + 1} 0 string_type",
        f"maps {LENGTH + 1} k string_type",
    ]
    source = model_source(out / "hostile")
    # every 64 levels of arrays, of aliases of arrays, of maps: one alias evaluated apart
    assert source.count(": TypeAlias = Apart[") >= 3 * (LENGTH // 65)
