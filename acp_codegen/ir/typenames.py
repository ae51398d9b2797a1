"""Plain annotations of stored values and parameters, and the names they use.

Owns how a type reads where no validation happens (the session reducer's stored values, the
builders' parameters): no pydantic constraints, `Sequence` for arrays, `X | None` for optional
values; an enum parameter also takes its values as strings (`<Enum>Value`, which `enums.py`
defines: `enum_value_alias`). A module that names its models through the `models` module
(`dispatch.py`, so that `typing.get_type_hints` finds them without importing every model) gets
them qualified (`models.PromptRequest`); the names an annotation uses are collected, so the
module imports exactly those.
"""

from __future__ import annotations

from acp_codegen.ir.nodes import ArrayOf, Const, Enum, MapOf, Protocol, Ref, Scalar, TypeExpr

_PLAIN = {
    "str": "str",
    "int": "int",
    "number": "int | float",
    "bool": "bool",
    "none": "None",
    "object": "dict[str, Any]",
}


def enum_value_alias(protocol: Protocol, enum: Enum) -> str:
    """The name of `<Enum> | Literal[<its values>]` in `enums.py`: `<Enum>Value`, with `_` added
    while a definition has that name."""
    name = f"{enum.name}Value"
    while protocol.get(name) is not None:
        name += "_"
    return name


class TypeNames:
    """Plain annotations over one protocol, collecting the definitions they name (`names`) and
    the enums' value aliases (`aliases`)."""

    def __init__(self, protocol: Protocol, *, qualified: bool = False) -> None:
        self.protocol = protocol
        self.qualified = qualified  # models as `models.X` (enums are imported by name)
        self.names: set[str] = set()
        self.aliases: set[str] = set()
        self.symbols: set[str] = set()  # `Sequence`, `Any`: what the annotations need imported

    def use(self, name: str) -> str:
        """A definition's name as the module spells it (and remember it)."""
        self.names.add(name)
        if self.qualified and not isinstance(self.protocol.get(name), Enum):
            return f"models.{name}"
        return name

    def plain(self, expr: TypeExpr, *, values: bool = False) -> str:
        """A plain annotation (no pydantic constraints) for a stored value; `values`: an enum
        also takes its values as strings (its value alias), at any depth."""
        if isinstance(expr, Scalar):
            text = _PLAIN.get(expr.kind, "Any")
            if "Any" in text:
                self.symbols.add("Any")
            return text
        if isinstance(expr, Ref):
            found = self.protocol.get(expr.name)
            if values and isinstance(found, Enum) and found.values:
                alias = enum_value_alias(self.protocol, found)
                self.aliases.add(alias)
                return alias
            return self.use(expr.name)
        if isinstance(expr, ArrayOf):
            self.symbols.add("Sequence")
            return f"Sequence[{self.plain(expr.item, values=values)}]"
        if isinstance(expr, MapOf):
            return f"dict[str, {self.plain(expr.value, values=values)}]"
        if isinstance(expr, Const):
            return "None" if expr.value is None else type(expr.value).__name__
        parts: list[str] = []
        for option in expr.options:
            text = self.plain(option, values=values)
            if text not in parts:
                parts.append(text)
        return " | ".join([p for p in parts if p != "None"] + (["None"] if "None" in parts else []))

    def optional(self, expr: TypeExpr, *, values: bool = False) -> str:
        """`plain`, with `| None` unless it already takes `None`."""
        text = self.plain(expr, values=values)
        return (
            text if text == "Any" or text.endswith("| None") or text == "None" else f"{text} | None"
        )

    def parameter(self, expr: TypeExpr) -> str:
        """A parameter's annotation: as `plain`, but an enum also takes its values as strings."""
        return self.plain(expr, values=True)

    def optional_parameter(self, expr: TypeExpr) -> str:
        """`parameter`, with `| None` unless it already takes `None`."""
        return self.optional(expr, values=True)
