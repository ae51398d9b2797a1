"""`acp_codegen/ir/chains.py`: the bound of a module's longest chain of classes, from the IR, is
never below the real chain (the runtime skips its own walk below the bound's step)."""

from __future__ import annotations

from pathlib import Path

from generator_support import Schema, generated_ok, minimal, ping


def _bound(out: Path) -> int:
    for line in (
        (out / "hostile" / "_models" / "__init__.py").read_text(encoding="utf-8").splitlines()
    ):
        if line.startswith("_CHAIN_BOUND = "):
            return int(line.removeprefix("_CHAIN_BOUND = "))
    raise AssertionError("no _CHAIN_BOUND in _models/__init__.py")


def _chain(schema: Schema, length: int, *, through: str | None = None) -> None:
    """`C00.next: C01` ... (through an array or an alias when asked); PingRequest uses `C00`."""
    for i in range(length):
        target: Schema = {"$ref": f"#/$defs/C{i + 1:02d}"}
        if through == "array":
            target = {"type": "array", "items": target}
        elif through == "alias":
            schema["$defs"][f"Link{i:02d}"] = {"anyOf": [target, {"type": "null"}]}
            target = {"$ref": f"#/$defs/Link{i:02d}"}
        schema["$defs"][f"C{i:02d}"] = {"type": "object", "properties": {"next": target}}
    schema["$defs"][f"C{length:02d}"] = {
        "type": "object",
        "properties": {"end": {"type": "string"}},
    }
    ping(schema)["properties"]["chain"] = {"$ref": "#/$defs/C00"}


def test_the_bound_counts_every_link(tmp_path: Path) -> None:
    for through in (None, "array", "alias"):
        schema = minimal()
        _chain(schema, 20, through=through)
        # PingRequest -> C00 -> ... -> C20: 21 links
        (tmp_path / str(through)).mkdir()
        assert _bound(generated_ok(tmp_path / str(through), schema)) >= 21, through


def test_classes_naming_each_other_count_as_a_chain_through_all(tmp_path: Path) -> None:
    schema = minimal()
    names = [f"R{i}" for i in range(5)]
    for i, name in enumerate(names):  # R0 -> R1 -> ... -> R4 -> R0
        nxt = names[(i + 1) % len(names)]
        schema["$defs"][name] = {
            "type": "object",
            "properties": {"next": {"$ref": f"#/$defs/{nxt}"}},
        }
    ping(schema)["properties"]["ring"] = {"$ref": "#/$defs/R0"}
    assert _bound(generated_ok(tmp_path, schema)) >= 5
