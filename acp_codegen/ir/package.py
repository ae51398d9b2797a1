"""A generated package as the templates print it: every decision of the IR about one package,
made once.

Owns the entry the render stage reads: the model modules and the descriptions their fields share
(`acp_codegen.ir.modules`), the enums with the alias of their values (`acp_codegen.ir.typenames`),
the dispatch API (`acp_codegen.ir.dispatch`), the session reducer's spec
(`acp_codegen.ir.session`, None for a revision without one) and the longest chain of classes
(`acp_codegen.ir.chains`).
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_codegen.ir.chains import chain_bound
from acp_codegen.ir.dispatch import Dispatch, dispatch_of
from acp_codegen.ir.modules import Models, isort_key, models_of
from acp_codegen.ir.nodes import Enum, Protocol
from acp_codegen.ir.session import session_spec
from acp_codegen.ir.session_nodes import SessionSpec
from acp_codegen.ir.typenames import enum_value_alias


@dataclass(frozen=True)
class EnumView:
    """An enum, and the alias of `<Enum> | Literal[<values>]` when a builder takes it (None: none
    does)."""

    enum: Enum
    value_alias: str | None


@dataclass(frozen=True)
class PackageView:
    """Everything the templates of one package read."""

    protocol: Protocol
    models: Models
    enums: tuple[EnumView, ...]
    dispatch: Dispatch
    session: SessionSpec | None
    chain_bound: int

    @property
    def module_of(self) -> tuple[tuple[str, str], ...]:
        """(model name, its module of `_models`), in the IR's order."""
        where = {name: m.module for m in self.models.modules for name in m.names}
        return tuple((d.name, where[d.name]) for d in self.protocol.definitions if d.name in where)

    @property
    def reexports(self) -> tuple[tuple[str, str], ...]:
        """(module of `_models`, model name) in isort's order: the facade's re-exports."""
        return tuple(
            sorted(
                ((m, n) for n, m in self.module_of), key=lambda item: (item[0], isort_key(item[1]))
            )
        )


def package_view(protocol: Protocol) -> PackageView:
    """The view of one package."""
    dispatch = dispatch_of(protocol)
    used = set(dispatch.enum_imports)
    enums = tuple(
        EnumView(d, alias if (alias := enum_value_alias(protocol, d)) in used else None)
        for d in protocol.definitions
        if isinstance(d, Enum)
    )
    return PackageView(
        protocol,
        models_of(protocol),
        enums,
        dispatch,
        session_spec(protocol),
        chain_bound(protocol.definitions),
    )
