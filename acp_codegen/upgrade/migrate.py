"""`acp-codegen migrate`: rewrite a user's code from one revision's bindings to another's (libcst).

Owns the rewrite of one module: renamed generated classes (imports, uses, `module.Class`),
renamed attributes where the class of the value is known (constructor keywords, annotated
names, `isinstance` checks, `for` over list fields, attribute chains through the old IR), and
renamed handler methods in subclasses of `Agent`/`Client`. Comments and formatting survive
(concrete syntax tree). What cannot be rewritten safely is listed for a person with its line:
removed classes and attributes, and every use (import, `module.Name`, name) of a definition that
changed kind or of an alias that now stands for another type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from acp_codegen.upgrade.api_changes import HANDLER_CLASSES, ApiChanges
from acp_codegen.upgrade.migrate_types import OldBindings, class_of, item_class_of

_CONTAINERS = frozenset(
    {"list", "List", "Sequence", "Iterable", "Iterator", "tuple", "set", "frozenset"}
)
_ITEMS = "[]"  # marks a binding to a container of the class that follows


@dataclass(frozen=True)
class Edit:
    """One rewrite: line, what it was and what it becomes."""

    line: int
    old: str
    new: str


@dataclass(frozen=True)
class Manual:
    """One use a person must look at."""

    line: int
    message: str


@dataclass
class Rewritten:
    """The rewrite of one module."""

    code: str
    edits: list[Edit] = field(default_factory=list)
    manual: list[Manual] = field(default_factory=list)


class _Migrator(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, api: ApiChanges, old: OldBindings) -> None:
        super().__init__()
        self.classes = api.class_renames()
        self.attrs = api.attribute_renames()
        self.handlers = api.handler_renames()
        self.removed_classes = {c.old for c in api.of("class-removed") if c.old}
        self.kind_changed = api.kind_changes()
        self.removed_attrs = {c.old: "removed" for c in api.of("attribute-removed") if c.old}
        self.removed_attrs.update(
            {c.old: f"retyped ({c.detail})" for c in api.of("attribute-retyped") if c.old}
        )
        self.removed_handlers = {c.old for c in api.of("handler-removed", "hook-removed") if c.old}
        self.old = old
        self.imported: dict[str, str] = {}  # local name -> generated class it was imported as
        self.modules: set[str] = set()  # local names bound by imports (modules or packages)
        self.scopes: list[dict[str, str]] = [{}]  # local variable -> old class name
        self.handler_stack: list[str | None] = []
        self.skip: set[int] = set()  # ids of Name nodes that are not references
        self.out = Rewritten("")

    # -- bookkeeping ----------------------------------------------------------------------
    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _edit(self, node: cst.CSTNode, old: str, new: str) -> None:
        self.out.edits.append(Edit(self._line(node), old, new))

    def _manual(self, node: cst.CSTNode, message: str) -> None:
        self.out.manual.append(Manual(self._line(node), message))

    def _bind(self, name: str, cls: str | None) -> None:
        if cls is not None:
            self.scopes[-1][name] = cls

    def _lookup(self, name: str) -> str | None:
        return next((s[name] for s in reversed(self.scopes) if name in s), None)

    # -- what a node is ---------------------------------------------------------------------
    def _class_named(self, node: cst.BaseExpression) -> str | None:
        """The old generated class an expression names (`X`, `module.X`, `X | None`, `"X"`)."""
        if isinstance(node, cst.Name) and node.value in self.imported:
            return self.imported[node.value]
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in self.modules
        ):
            return node.attr.value if self.old.is_class(node.attr.value) else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            return self._class_named(node.left) or self._class_named(node.right)
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and node.value.value == "Optional"
        ):
            element = node.slice[0].slice if node.slice else None
            return self._class_named(element.value) if isinstance(element, cst.Index) else None
        return None

    def _class_of(self, node: cst.BaseExpression) -> str | None:
        """The old class of the value of an expression, when it can be told."""
        if isinstance(node, cst.Name):
            held = self._lookup(node.value)
            return None if held is None or held.startswith(_ITEMS) else held
        if isinstance(node, cst.Call):
            return self._class_named(node.func)
        if isinstance(node, cst.Attribute):
            owner = self._class_of(node.value)
            return class_of(self.old.field_type(owner, node.attr.value)) if owner else None
        return None

    # -- imports ----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name
            if isinstance(bound, cst.Name):
                self.modules.add(bound.value)
            elif isinstance(bound, cst.Attribute):
                self.modules.add(cst.Module([]).code_for_node(bound).split(".")[0])

    def leave_ImportAlias(
        self, original: cst.ImportAlias, updated: cst.ImportAlias
    ) -> cst.ImportAlias:
        name = original.name
        if not isinstance(name, cst.Name) or original.asname is not None and not self._from_import:
            return updated
        local = (
            original.asname.name.value
            if original.asname and isinstance(original.asname.name, cst.Name)
            else name.value
        )
        if self.old.is_class(name.value) or name.value in self.classes:
            self.imported[local] = name.value
        else:
            self.modules.add(local)
        if name.value in self.removed_classes:
            self._manual(
                original,
                f"class `{name.value}` was removed from the bindings: remove or replace its uses",
            )
        if name.value in self.kind_changed:
            self._manual(original, self.kind_changed[name.value])
        new = self.classes.get(name.value)
        if new is None:
            return updated
        self._edit(original, name.value, new)
        return updated.with_changes(name=cst.Name(new))

    _from_import = False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._from_import = True

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._from_import = False
        return updated

    # -- scopes and what names hold -----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [self._handler_base(b.value) for b in node.bases]
        self.handler_stack.append(next((b for b in bases if b), None))
        self.scopes.append({})

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.handler_stack.pop()
        self.scopes.pop()
        return updated

    def _handler_base(self, node: cst.BaseExpression) -> str | None:
        name = (
            node.value
            if isinstance(node, cst.Name)
            else node.attr.value if isinstance(node, cst.Attribute) else None
        )
        return name if name in HANDLER_CLASSES.values() else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append({})
        self.skip.add(id(node.name))
        for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            self.skip.add(id(param.name))
            if param.annotation is not None:
                self._bind_annotation(param.name.value, param.annotation.annotation)

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        self.scopes.pop()
        handler = (
            self.handler_stack[-1]
            if self.handler_stack and len(self.scopes) == len(self.handler_stack) + 1
            else None
        )
        if handler is None:
            return updated
        name = original.name.value
        if f"{handler}.{name}" in self.removed_handlers:
            self._manual(
                original, f"`{handler}.{name}` is gone from the bindings: nobody calls it any more"
            )
        new = self.handlers.get(handler, {}).get(name)
        if new is None:
            return updated
        self._edit(original, f"{handler}.{name}", f"{handler}.{new}")
        return updated.with_changes(name=cst.Name(new))

    def visit_Assign(self, node: cst.Assign) -> None:
        cls = self._class_of(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bind(target.target.value, cls)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind_annotation(node.target.value, node.annotation.annotation)

    def _bind_annotation(self, name: str, annotation: cst.BaseExpression) -> None:
        """`x: C` binds x to C; `xs: list[C]` (or Sequence, Iterable, ...) binds xs to items of
        C."""
        if (
            isinstance(annotation, cst.Subscript)
            and isinstance(annotation.value, cst.Name)
            and annotation.value.value in _CONTAINERS
        ):
            element = annotation.slice[0].slice
            item = self._class_named(element.value) if isinstance(element, cst.Index) else None
            self._bind(name, None if item is None else _ITEMS + item)
        else:
            self._bind(name, self._class_named(annotation))

    def visit_For(self, node: cst.For) -> None:
        if not isinstance(node.target, cst.Name):
            return
        if isinstance(node.iter, cst.Attribute):
            owner = self._class_of(node.iter.value)
            if owner:
                self._bind(
                    node.target.value,
                    item_class_of(self.old.field_type(owner, node.iter.attr.value)),
                )
        elif isinstance(node.iter, cst.Name) and (
            held := self._lookup(node.iter.value) or ""
        ).startswith(_ITEMS):
            self._bind(node.target.value, held.removeprefix(_ITEMS))

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if (
            isinstance(test, cst.Call)
            and isinstance(test.func, cst.Name)
            and test.func.value == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0].value, cst.Name)
        ):
            self._bind(test.args[0].value.value, self._class_named(test.args[1].value))

    # -- the rewrites -----------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))

    def leave_Attribute(
        self, original: cst.Attribute, updated: cst.Attribute
    ) -> cst.BaseExpression:
        attr = original.attr.value
        if (
            isinstance(original.value, cst.Name)
            and original.value.value in self.modules
            and attr in self.kind_changed
        ):
            self._manual(original, self.kind_changed[attr])
        if (
            isinstance(original.value, cst.Name)
            and original.value.value in self.modules
            and attr in self.classes
        ):
            self._edit(original, attr, self.classes[attr])
            return updated.with_changes(attr=cst.Name(self.classes[attr]))
        if (
            isinstance(original.value, cst.Name)
            and original.value.value == "self"
            and self.handler_stack
        ):
            handler = self.handler_stack[-1]
            new = self.handlers.get(handler or "", {}).get(attr)
            if new is not None:
                self._edit(original, f"self.{attr}", f"self.{new}")
                return updated.with_changes(attr=cst.Name(new))
        owner = self._class_of(original.value)
        return self._renamed_attr(original, updated, owner, attr) if owner else updated

    def _renamed_attr(
        self, original: cst.Attribute, updated: cst.Attribute, owner: str, attr: str
    ) -> cst.Attribute:
        declaring = self.old.declaring(owner, attr)
        if declaring is None:
            return updated
        if f"{declaring}.{attr}" in self.removed_attrs:
            self._manual(
                original,
                f"attribute `{declaring}.{attr}` {self.removed_attrs[f'{declaring}.{attr}']}",
            )
        new = self.attrs.get((declaring, attr))
        if new is None:
            return updated
        self._edit(original, f"{declaring}.{attr}", f"{declaring}.{new}")
        return updated.with_changes(attr=cst.Name(new))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        cls = self._class_named(original.func)
        if cls is None:
            return updated
        args = list(updated.args)
        for index, arg in enumerate(original.args):
            if arg.keyword is None:
                continue
            declaring = self.old.declaring(cls, arg.keyword.value) or cls
            key = f"{declaring}.{arg.keyword.value}"
            if key in self.removed_attrs:
                self._manual(
                    arg,
                    (
                        f"keyword `{arg.keyword.value}` of `{cls}`: attribute "
                        f"{self.removed_attrs[key]}"
                    ),
                )
            new = self.attrs.get((declaring, arg.keyword.value))
            if new is not None:
                self._edit(arg, f"{cls}({arg.keyword.value}=)", f"{cls}({new}=)")
                args[index] = args[index].with_changes(keyword=cst.Name(new))
        return updated.with_changes(args=args)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) in self.skip or original.value not in self.imported:
            return updated
        cls = self.imported[original.value]
        if cls != original.value:
            return updated  # imported under an alias: the alias stays
        if cls in self.removed_classes:
            self._manual(original, f"class `{cls}` was removed from the bindings")
        if cls in self.kind_changed:
            self._manual(original, self.kind_changed[cls])
        new = self.classes.get(cls)
        if new is None:
            return updated
        self._edit(original, cls, new)
        return updated.with_changes(value=new)


def rewrite_module(code: str, api: ApiChanges, old: OldBindings) -> Rewritten:
    """Rewrite one module's source; comments and formatting are kept."""
    wrapper = MetadataWrapper(cst.parse_module(code))
    migrator = _Migrator(api, old)
    module = wrapper.visit(migrator)
    migrator.out.code = module.code
    migrator.out.edits.sort(key=lambda e: e.line)
    migrator.out.manual = sorted(dict.fromkeys(migrator.out.manual), key=lambda m: m.line)
    return migrator.out
