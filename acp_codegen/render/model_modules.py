"""Model modules: datamodel-code-generator's module body distributed over the IR's groups.

DMCG renders every model definition in one module body (`acp_codegen.render.models`). This stage
cuts that body at its top-level statements, each a definition (a class, or an alias with the
docstring after it), and gives each group of `acp_codegen.ir.groups` a module of `_models`: our head
(every import the definitions need, and the names it uses from other groups), the group's
definitions in the IR's order (`acp_codegen.ir.order`: bases and what an alias is evaluated from
first), and its `__all__`. DMCG's own imports are not placed: the head has what the definitions
use. `models.py`, the facade that loads a group at the first use of one of its names, is a
template of its own. No statement's text is changed, only placed.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from acp_codegen.ir.groups import SCALARS, ModelGroup

GROUPS_DIR = "_models"
_SEPARATOR = "\n\n\n"  # two blank lines between top-level definitions (black's count)


@dataclass(frozen=True)
class ModelsBody:
    """DMCG's module body, cut: each definition's text, and the output order (the IR's)."""

    texts: dict[str, str]
    order: tuple[str, ...]

    def ordered(self, names: frozenset[str]) -> list[str]:
        """`names` in the output order."""
        return [name for name in self.order if name in names]


def _defined(node: ast.stmt) -> str | None:
    """The name a top-level statement defines (a class, `X: TypeAlias = ...`, `X = ...`)."""
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def cut_body(body: str, order: Sequence[str]) -> ModelsBody:
    """`body` (DMCG's output) as one text per definition of `order` (the output order); its
    leading imports are dropped.

    Raises ValueError for a statement that is none of these (DMCG changed what it emits) or a
    definition of `order` the body lacks.
    """
    names = frozenset(order)
    lines = body.splitlines()
    spans: dict[str, list[int]] = {}
    last: str | None = None
    for node in ast.parse(body).body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = node.end_lineno or node.lineno
        name = _defined(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not spans:
            continue  # DMCG's imports: the group heads import what the definitions use
        elif name in names and name not in spans:
            spans[name] = [start, end]
            last = name
        elif _is_docstring(node) and last is not None:
            spans[last][1] = end  # an alias's docstring goes with it
            last = None
        elif name == "__all__":
            last = None  # the footer: the facade states `__all__` itself
        else:
            raise ValueError(f"unexpected statement at line {node.lineno}: {lines[start].strip()[:60]!r}")
    missing = sorted(names - spans.keys())
    if missing:
        raise ValueError(f"no definition of {missing[0]} in the models body")
    texts = {name: "\n".join(lines[a:b]) for name, (a, b) in spans.items()}
    return ModelsBody(texts, tuple(order))


def group_doc(group: ModelGroup) -> str:
    """The first line of a group module's docstring."""
    if group.module == SCALARS:
        return "Aliases of plain types, which name no other definition."
    return f"`{group.root}` and the definitions that only it uses."


def group_text(head: str, body: ModelsBody, group: ModelGroup) -> str:
    """One group's module: `head`, its definitions, its `__all__`."""
    names = body.ordered(group.names)
    exports = "".join(f'    "{name}",\n' for name in names)
    parts = [head.rstrip("\n"), *(body.texts[name] for name in names)]
    return _SEPARATOR.join([*parts, f"__all__ = [\n{exports}]"]) + "\n"
