"""What `acp-codegen migrate` knows about the old bindings: classes, their fields' types, bases.

Owns the small type inference the rewrite needs to rename attributes safely: the class of a
name (annotated parameter or variable, constructor call, `isinstance` check, `for` over a list
field) and of an attribute chain (`params.plan.id`), answered from the old revision's IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_codegen.diff.typecmp import split_null
from acp_codegen.ir.nodes import ArrayOf, Protocol, Ref, Struct, TypeExpr


@dataclass(frozen=True)
class OldBindings:
    """The old revision's classes, as the user's code saw them."""

    protocol: Protocol

    def is_class(self, name: str) -> bool:
        """Whether a generated class of this name existed."""
        return self.protocol.get(name) is not None

    def chain(self, name: str) -> list[Struct]:
        """A struct and its bases, nearest first."""
        found: list[Struct] = []
        current = self.protocol.get(name)
        while isinstance(current, Struct) and len(found) < 20:
            found.append(current)
            current = self.protocol.get(current.base) if current.base else None
        return found

    def declaring(self, name: str, attr: str) -> str | None:
        """The class (this one or a base) that declares attribute `attr`."""
        return next(
            (s.name for s in self.chain(name) if any(f.py_name == attr for f in s.fields)), None
        )

    def field_type(self, name: str, attr: str) -> TypeExpr | None:
        """The type of attribute `attr` of class `name`."""
        for struct in self.chain(name):
            for f in struct.fields:
                if f.py_name == attr:
                    return f.type
        return None


def class_of(expr: TypeExpr | None) -> str | None:
    """The class a value of this type is (`X` or `X | None`)."""
    if expr is None:
        return None
    expr, _ = split_null(expr)
    return expr.name if isinstance(expr, Ref) else None


def item_class_of(expr: TypeExpr | None) -> str | None:
    """The class of the items of a list type (`list[X]`, `list[X] | None`)."""
    if expr is None:
        return None
    expr, _ = split_null(expr)
    return class_of(expr.item) if isinstance(expr, ArrayOf) else None
