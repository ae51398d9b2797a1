"""Model modules: datamodel-code-generator's module body distributed over the IR's groups.

DMCG renders every model definition in one module body (`codegen.render.models`), in its order.
This stage cuts that body at its top-level statements, each a definition (a class, or an alias
with the docstring after it), and gives each group of `codegen.ir.groups` a module of `_models`:
our head (imports, and the names it uses from other groups), DMCG's own imports, the group's
definitions in DMCG's order, and its `__all__`. `models.py`, the facade that loads a group at the
first use of one of its names, is a template of its own. No statement's text is changed, only
placed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from codegen.fmt import LINE_LENGTH
from codegen.ir.groups import SCALARS, ModelGroup

GROUPS_DIR = "_models"
_SEPARATOR = "\n\n\n"  # two blank lines between top-level definitions (black's count)


@dataclass(frozen=True)
class ModelsBody:
    """DMCG's module body, cut: its imports, each definition's text, and the output order."""

    imports: str
    texts: dict[str, str]
    order: tuple[str, ...]

    def ordered(self, names: frozenset[str]) -> list[str]:
        """`names` in the body's order."""
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


def cut_body(body: str, names: frozenset[str]) -> ModelsBody:
    """`body` (DMCG's output) as its imports and one text per definition in `names`.

    Raises ValueError for a statement that is none of these (DMCG changed what it emits) or a
    definition of `names` the body lacks.
    """
    lines = body.splitlines()
    imports: list[str] = []
    spans: dict[str, list[int]] = {}
    last: str | None = None
    for node in ast.parse(body).body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = node.end_lineno or node.lineno
        name = _defined(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not spans:
            imports.append("\n".join(lines[start:end]))
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
    return ModelsBody("\n".join(imports), texts, tuple(spans))


def group_doc(group: ModelGroup) -> str:
    """The first line of a group module's docstring."""
    if group.module == SCALARS:
        return "Aliases of plain types, which name no other definition."
    return f"`{group.root}` and the definitions that only it uses."


# A one-line `from x import a, b`: black leaves such an import as it is when it fits the line.
_PLAIN_IMPORT = re.compile(r"from [A-Za-z_][\w.]* import [A-Za-z_]\w*(, [A-Za-z_]\w*)*")


def group_text(head: str, body: ModelsBody, group: ModelGroup) -> tuple[str, str | None]:
    """One group's module (`head`, DMCG's imports, its definitions, its `__all__`), and its
    opening up to the first class when that is black's layout already (else None).

    The head template is written in black's layout (tests hold every generated head to it); DMCG's
    imports are when each is a plain one-line import that fits. The format stage then formats only
    the rest (`codegen.fmt.Formatter.submit`'s `heads`).
    """
    names = body.ordered(group.names)
    exports = "".join(f'    "{name}",\n' for name in names)
    opening = head.rstrip("\n") + "\n\n" + body.imports
    parts = [opening, *(body.texts[name] for name in names)]
    text = _SEPARATOR.join([*parts, f"__all__ = [\n{exports}]"]) + "\n"
    plain = all(_PLAIN_IMPORT.fullmatch(line) and len(line) <= LINE_LENGTH for line in body.imports.splitlines())
    return text, opening + "\n" if plain else None
