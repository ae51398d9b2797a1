"""Model modules: what each module of a package's `_models` holds, as the templates print it.

Owns the Python side of the models: each group of `acp_codegen.ir.groups` becomes a
`ModelModule` with its definitions in the IR's order (`acp_codegen.ir.order`: bases and what an
alias is evaluated from first), each spelled (`acp_codegen.ir.spelling`), and exactly the imports
its text uses, grouped and sorted as isort sorts them. A class's bases, its leniency hints (the
runtime gives a class that declares them the validator that applies them) and its fixed tags are
decided here; the template prints these facts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from acp_codegen.ir.groups import SCALARS, STANDALONE, ModelGroup, model_groups, module_of
from acp_codegen.ir.nodes import Alias, Enum, Protocol, Struct, TaggedUnion
from acp_codegen.ir.spelling import (
    IMPORTS,
    Uses,
    alias_value,
    all_fields,
    field_spelling,
    python_literal,
    union_value,
)

GROUPS_PACKAGE = "_models"
"""The sub-package holding the model modules (`models.py` is their facade)."""

SHARED_DOC_MIN = 10
"""A description the schema gives this many fields of one wire name is documented once, in the
models' facade, instead of on each (ACP gives `_meta` the same five lines on most classes)."""


@dataclass(frozen=True)
class ModelField:
    """One field of a model class: `name: annotation = default`, then its docstring."""

    name: str
    annotation: str
    default: str | None
    doc: str | None


@dataclass(frozen=True)
class ModelClass:
    """One model class: a struct of the schema, a variant of a tagged union, or its unknown
    variant (`TaggedModel`)."""

    name: str
    bases: tuple[str, ...]
    doc: str | None
    forbid: bool  # unknown fields are refused (`additionalProperties: false`)
    tags: str | None  # the `__acp_tags__` value: the tag fields this class fixes
    lenient: tuple[tuple[str, str], ...]  # (wire name, rules literal), inherited fields included
    fields: tuple[ModelField, ...]
    kind: Literal["class"] = "class"


@dataclass(frozen=True)
class ModelAlias:
    """A tagged union or an alias: `Name: TypeAlias = value`, then its docstring."""

    name: str
    value: str
    doc: str | None
    kind: Literal["alias"] = "alias"


@dataclass(frozen=True)
class ImportLine:
    """`from module import names`, or `import module as alias` (when `names` is empty)."""

    module: str
    names: tuple[str, ...] = ()
    alias: str | None = None


@dataclass(frozen=True)
class SharedDoc:
    """A field description documented once: the fields of this wire name that carry it."""

    name: str  # the Python name those fields have
    wire_name: str
    description: str


@dataclass(frozen=True)
class ModelModule:
    """One module of `_models`: its docstring, imports and definitions."""

    module: str
    doc: str
    imports: tuple[tuple[ImportLine, ...], ...]  # isort's sections: stdlib, third party, package
    definitions: tuple[ModelClass | ModelAlias, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The names the module defines, in order."""
        return tuple(d.name for d in self.definitions)


@dataclass(frozen=True)
class Models:
    """The model modules of a package and the field descriptions documented once."""

    modules: tuple[ModelModule, ...]  # by module name
    shared_docs: tuple[SharedDoc, ...]  # by wire name


def models_of(protocol: Protocol) -> Models:
    """Every module of `_models`, and the descriptions its fields share."""
    groups = model_groups(protocol)
    where = module_of(groups)
    enums = frozenset(d.name for d in protocol.definitions if isinstance(d, Enum))
    shared = _shared_docs(protocol)
    documented = {doc.wire_name: doc.description for doc in shared}
    modules = tuple(_module(protocol, group, where, enums, documented) for group in groups)
    return Models(modules, shared)


def _shared_docs(protocol: Protocol) -> tuple[SharedDoc, ...]:
    """For each wire name, its most common field description when at least `SHARED_DOC_MIN`
    fields carry it (ties: the first in code-point order)."""
    counts: dict[tuple[str, str], int] = {}
    names: dict[str, str] = {}
    for d in protocol.definitions:
        for f in d.fields if isinstance(d, Struct) else ():
            if f.description:
                counts[f.wire_name, f.description] = counts.get((f.wire_name, f.description), 0) + 1
                names.setdefault(f.wire_name, f.py_name)
    best: dict[str, tuple[int, str]] = {}
    for (wire, description), count in sorted(counts.items()):
        if count >= SHARED_DOC_MIN and count > best.get(wire, (0, ""))[0]:
            best[wire] = (count, description)
    return tuple(
        SharedDoc(names[wire], wire, description) for wire, (_, description) in sorted(best.items())
    )


def _module(
    protocol: Protocol,
    group: ModelGroup,
    where: Mapping[str, str],
    enums: frozenset[str],
    documented: Mapping[str, str],
) -> ModelModule:
    uses: Uses = set()
    definitions = tuple(
        _definition(d, protocol, uses, documented)
        for d in protocol.definitions
        if d.name in group.names and not isinstance(d, Enum)
    )
    # Only what the text uses: the annotations a class inherits were evaluated in its base's
    # module when the base was created (`acp_runtime.models.annotations`), so a subclass module
    # needs none of its base's names (tests/generator/test_groups.py builds every class alone).
    imports = _imports(uses, group, where, enums)
    if group.method is not None:
        wire, params, result = group.method
        doc = f"`{wire}`: `{params}`, `{result}` and the definitions that only they use."
    else:
        doc = {
            SCALARS: "Aliases of plain types, which name no other definition.",
            STANDALONE: "The definitions no message holds, and the definitions only they use.",
        }.get(group.module, f"`{group.root}` and the definitions that only it uses.")
    return ModelModule(group.module, doc, imports, definitions)


def _definition(
    d: Struct | TaggedUnion | Alias, protocol: Protocol, uses: Uses, documented: Mapping[str, str]
) -> ModelClass | ModelAlias:
    if isinstance(d, Struct):
        return _class(d, protocol, uses, documented)
    uses.add("TypeAlias")
    value = union_value(d, protocol, uses) if isinstance(d, TaggedUnion) else alias_value(d, uses)
    return ModelAlias(d.name, value, d.description)


def _class(
    struct: Struct, protocol: Protocol, uses: Uses, documented: Mapping[str, str]
) -> ModelClass:
    fields = []
    for field in struct.fields:
        spelled = field_spelling(field, protocol, uses)
        doc = None if documented.get(field.wire_name) == field.description else field.description
        fields.append(ModelField(spelled.name, spelled.annotation, spelled.default, doc))
    tags = _tags(struct, protocol, uses)
    lenient: tuple[tuple[str, str], ...] = ()
    if any(f.lenience for f in struct.fields):  # its own hints: with the inherited ones
        uses.add("ClassVar")
        lenient = tuple(
            (f.wire_name, f"frozenset({python_literal(sorted(f.lenience))})")
            for f in all_fields(struct, protocol)
            if f.lenience
        )
    return ModelClass(
        struct.name,
        _bases(struct, protocol, uses),
        struct.description,
        struct.extra == "forbid",
        tags,
        lenient,
        tuple(fields),
    )


def _tagged(struct: object) -> bool:
    return isinstance(struct, Struct) and struct.role in ("variant", "unknown")


def _bases(struct: Struct, protocol: Protocol, uses: Uses) -> tuple[str, ...]:
    """A struct's bases: its schema base (if any) and `TaggedModel` for a union's variants."""
    tagged = _tagged(struct)
    if struct.base is None:
        base = "TaggedModel" if tagged else "AcpModel"
        uses.add(base)
        return (base,)
    uses.add(struct.base)
    if tagged and not _tagged(protocol.get(struct.base)):
        uses.add("TaggedModel")
        return (struct.base, "TaggedModel")
    return (struct.base,)


def _tags(struct: Struct, protocol: Protocol, uses: Uses) -> str | None:
    """The `__acp_tags__` value: the tag fields this struct fixes, with its tagged base's."""
    names = [f.py_name for f in struct.fields if f.tag and f.default_json is not None]
    if not names:
        return None
    uses.add("ClassVar")
    own = f"frozenset({python_literal(sorted(names))})"
    base = protocol.get(struct.base) if struct.base else None
    return f"{base.name}.__acp_tags__ | {own}" if _tagged(base) and base is not None else own


def _imports(
    uses: Iterable[str], group: ModelGroup, where: Mapping[str, str], enums: frozenset[str]
) -> tuple[tuple[ImportLine, ...], ...]:
    """Exactly the imports of `uses`, in isort's sections and order."""
    modules: dict[tuple[str, str | None], set[str]] = {}
    for name in uses:
        if name in IMPORTS:
            module, alias = IMPORTS[name]
            modules.setdefault((module, alias), set()).update(() if alias else (name,))
        elif name in enums:
            modules.setdefault(("..enums", None), set()).add(name)
        elif where.get(name, group.module) != group.module:
            modules.setdefault((f".{where[name]}", None), set()).add(name)
    lines = [
        ImportLine(m, tuple(sorted(ns, key=isort_key)), alias) for (m, alias), ns in modules.items()
    ]
    sections: dict[int, list[ImportLine]] = {}
    for line in lines:
        sections.setdefault(_section(line.module), []).append(line)
    return tuple(tuple(sorted(sections[s], key=_line_key)) for s in sorted(sections))


_STDLIB = frozenset({"collections.abc", "re", "typing"})


def _section(module: str) -> int:
    """The section isort puts a module in: 0 standard library, 1 third party, 2 the package's
    own."""
    if module.startswith("."):
        return 2
    return 0 if module in _STDLIB else 1


def _line_key(line: ImportLine) -> tuple[int, int, str]:
    """The order isort gives lines within a section: `import x` first, then `from` imports;
    relative ones from the furthest (`..`) to the closest (`.`)."""
    dots = len(line.module) - len(line.module.lstrip("."))
    return (0 if line.alias else 1, -dots, line.module.lstrip("."))


def isort_key(name: str) -> tuple[int, str, str]:
    """The order isort gives imported names: constants, then classes, then the rest, each
    ignoring case."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)
