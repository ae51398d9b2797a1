"""The "Python API changes" of an upgrade: what users of the generated bindings must change.

Owns turning two revisions (and their diff) into `ApiChange`s: generated classes renamed or
removed, definitions that changed kind (a class that became a tagged union, a union that became a
class, an alias that became or stopped being one) and aliases that stand for another type, model
attributes renamed, removed or retyped, handler methods added, removed or renamed on
`Agent`/`Client`, and `on_<variant>` hooks added or removed. Each says what to do and whether
`acp-codegen migrate` rewrites it. Also renders the report section.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from acp_codegen.diff.collector import Collector
from acp_codegen.diff.facts import facts_for
from acp_codegen.diff.model import Change
from acp_codegen.ir.dispatch import fanout_for
from acp_codegen.ir.nodes import Alias, Definition, Enum, Protocol, Struct, TaggedUnion

Kind = Literal[
    "class-renamed",
    "class-removed",
    "kind-changed",
    "alias-retyped",
    "attribute-renamed",
    "attribute-removed",
    "attribute-retyped",
    "handler-renamed",
    "handler-removed",
    "handler-added",
    "hook-removed",
    "hook-added",
]
HANDLER_CLASSES = {"agent": "Agent", "client": "Client"}
AUTOMATIC: frozenset[Kind] = frozenset({"class-renamed", "attribute-renamed", "handler-renamed"})
_RETYPED = (
    "TYPE_CHANGED",
    "TYPE_NARROWED",
    "TYPE_WIDENED",
    "FIELD_BECAME_NULLABLE",
    "FIELD_BECAME_NON_NULLABLE",
)
_ACTION: dict[Kind, str] = {
    "class-renamed": "rename imports and uses (`acp-codegen migrate` does it)",
    "class-removed": "remove or replace its uses (by hand)",
    "kind-changed": (
        "the name now stands for another kind of thing: fix its uses as each entry says (by hand)"
    ),
    "alias-retyped": (
        "the alias stands for another type: check the values you give and take (by hand)"
    ),
    "attribute-renamed": (
        "rename the attribute and keyword arguments (`acp-codegen migrate` does it)"
    ),
    "attribute-removed": "stop reading or passing it (by hand)",
    "attribute-retyped": "check what you read and pass: its Python type changed (by hand)",
    "handler-renamed": "rename the method in your subclass (`acp-codegen migrate` does it)",
    "handler-removed": "delete the method from your subclass: nobody calls it any more (by hand)",
    "handler-added": (
        "implement it if you support the method (the default answers method-not-found)"
    ),
    "hook-removed": "delete the hook from your subclass: that update is no longer sent (by hand)",
    "hook-added": "override it to handle the new update (optional)",
}


@dataclass(frozen=True)
class ApiChange:
    """One change to the Python API: `old -> new` (`Class`, `Class.attribute`, `Agent.method`)."""

    kind: Kind
    old: str | None
    new: str | None
    detail: str = ""

    @property
    def automatic(self) -> bool:
        """Whether `acp-codegen migrate` rewrites it."""
        return self.kind in AUTOMATIC

    @property
    def action(self) -> str:
        """What a user of the bindings should do."""
        return _ACTION[self.kind]

    def shown(self) -> str:
        """`old -> new`, or the one name there is."""
        if self.old and self.new:
            return f"`{self.old}` -> `{self.new}`"
        return f"`{self.old or self.new}`"


@dataclass(frozen=True)
class ApiChanges:
    """Every Python API change between two revisions, in a stable order."""

    changes: tuple[ApiChange, ...]

    def of(self, *kinds: Kind) -> list[ApiChange]:
        """The changes of some kinds."""
        return [c for c in self.changes if c.kind in kinds]

    def class_renames(self) -> dict[str, str]:
        """Old class name -> new class name."""
        return {c.old: c.new for c in self.of("class-renamed") if c.old and c.new}

    def attribute_renames(self) -> dict[tuple[str, str], str]:
        """(old class name, old attribute) -> new attribute."""
        out: dict[tuple[str, str], str] = {}
        for c in self.of("attribute-renamed"):
            assert c.old and c.new
            owner, old_attr = c.old.rsplit(".", 1)
            out[(owner, old_attr)] = c.new.rsplit(".", 1)[1]
        return out

    def kind_changes(self) -> dict[str, str]:
        """Old name -> what its users must know, for every definition that changed kind or whose
        alias now stands for another type."""
        return {
            c.old: f"`{c.old}` {c.detail}"
            for c in self.of("kind-changed", "alias-retyped")
            if c.old
        }

    def handler_renames(self) -> dict[str, dict[str, str]]:
        """Handler class (`Agent`/`Client`) -> old method name -> new method name."""
        out: dict[str, dict[str, str]] = {}
        for c in self.of("handler-renamed"):
            assert c.old and c.new
            cls, old = c.old.split(".", 1)
            out.setdefault(cls, {})[old] = c.new.split(".", 1)[1]
        return out


def api_changes(old: Protocol, new: Protocol, diff: Sequence[Change]) -> ApiChanges:
    """The Python API changes from the old bindings to the new ones."""
    c = Collector(facts_for(old), facts_for(new))
    found: list[ApiChange] = []
    renamed_classes = {
        ch.old: ch.new for ch in diff if ch.rule == "CLASS_RENAMED" and ch.old and ch.new
    }
    for ch in diff:
        if ch.rule == "CLASS_RENAMED":
            found.append(ApiChange("class-renamed", ch.old, ch.new))
        elif ch.rule == "CLASS_REMOVED":
            found.append(ApiChange("class-removed", ch.old, None))
        elif ch.rule == "DEFINITION_KIND_CHANGED":
            found.extend(_kind_changed(c, ch.path))
        elif ch.rule in _RETYPED and isinstance(alias := c.new.at(ch.path), Alias):
            found.append(
                ApiChange(
                    "alias-retyped", alias.name, None, f"now stands for another type ({ch.message})"
                )
            )
        elif ch.rule == "ATTRIBUTE_RENAMED":
            owner = _owner(c, ch.path)
            if owner is not None and ch.old and ch.new:
                old_owner = {v: k for k, v in renamed_classes.items()}.get(owner, owner)
                found.append(
                    ApiChange("attribute-renamed", f"{old_owner}.{ch.old}", f"{owner}.{ch.new}")
                )
        elif ch.rule in ("FIELD_REMOVED", "REQUIRED_FIELD_REMOVED"):
            found.extend(_removed_attribute(c, ch.path))
        elif ch.rule in _RETYPED:
            owner = _owner(c, ch.path)
            struct = c.new.at(ch.path.rsplit(".", 1)[0]) if owner else None
            attr = (
                _py_name(struct, ch.path.rsplit(".", 1)[1]) if isinstance(struct, Struct) else None
            )
            if owner and attr:
                found.append(ApiChange("attribute-retyped", f"{owner}.{attr}", None, ch.message))
    found.extend(_handler_changes(c))
    unique = dict.fromkeys(found)
    return ApiChanges(
        tuple(sorted(unique, key=lambda a: (list(_ACTION).index(a.kind), a.old or a.new or "")))
    )


_KIND_NAMES = {
    "struct": "a class",
    "union": "a tagged union",
    "enum": "an enum",
    "alias": "an alias",
}


def _kind_changed(c: Collector, path: str) -> Iterable[ApiChange]:
    """A definition that changed kind: what the name is now, and what its users must do."""
    old, new = c.old.at(c.unrename(path)), c.new.at(path)
    if old is None or new is None:
        return
    was = _KIND_NAMES[old.kind]
    yield ApiChange(
        "kind-changed",
        old.name,
        new.name if new.name != old.name else None,
        f"was {was}, is now {_now(new, c.new.protocol)}",
    )


def _now(new: Definition, protocol: Protocol) -> str:
    """What a definition is now, and how code uses it, for the kind-change entry."""
    if isinstance(new, TaggedUnion):
        variants = [v.target for v in new.variants] + ([new.unknown] if new.unknown else [])
        shown = ", ".join(f"`{v}`" for v in variants)
        first = f"`{variants[0]}(...)`" if variants else "a variant"
        return (
            f"a tagged union of {shown}: it cannot be called nor used with isinstance; construct "
            f"a variant ({first}), test `isinstance(value, "
            f"{variants[0] if variants else 'Variant'})`; annotations stay valid"
        )
    if isinstance(new, Struct):
        return (
            f"a class: construct `{new.name}(...)`; code that took or matched on its old variants "
            "must change"
        )
    if isinstance(new, Enum):
        return f"an {'open ' if new.open else ''}enum: use its named values (`{new.name}.<VALUE>`)"
    return "an alias (a type for annotations: it cannot be called nor used with isinstance)"


def _owner(c: Collector, field_path: str) -> str | None:
    """The new Python class name of the struct a field path (`Struct.wire`) belongs to."""
    struct = c.new.at(field_path.rsplit(".", 1)[0])
    return struct.name if isinstance(struct, Struct) else None


def _py_name(struct: Struct, wire: str) -> str | None:
    return next((f.py_name for f in struct.fields if f.wire_name == wire), None)


def _removed_attribute(c: Collector, field_path: str) -> Iterable[ApiChange]:
    struct_path, wire = field_path.rsplit(".", 1)
    struct = c.old.at(c.unrename(struct_path))
    if isinstance(struct, Struct) and (attr := _py_name(struct, wire)) is not None:
        yield ApiChange("attribute-removed", f"{struct.name}.{attr}", None)


def _handlers(protocol: Protocol, side: str) -> dict[tuple[str, str, str], str]:
    return {(m.side, m.wire_name, m.kind): m.handler for m in protocol.methods if m.side == side}


def _hooks(protocol: Protocol, side: str) -> set[str]:
    hooks: set[str] = set()
    for method in protocol.methods:
        fanout = fanout_for(protocol, method) if method.side == side else None
        if fanout is not None:
            hooks.update(case.handler for case in fanout.cases)
    return hooks


def _handler_changes(c: Collector) -> Iterable[ApiChange]:
    """Handler methods and `on_<variant>` hooks of `Agent` and `Client`."""
    for side, cls in HANDLER_CLASSES.items():
        before, after = _handlers(c.old.protocol, side), _handlers(c.new.protocol, side)
        moved = {a: b for a, b in c.method_renames.items() if a in before and b in after}
        for key, name in sorted(before.items()):
            if key in moved:
                if after[moved[key]] != name:
                    yield ApiChange(
                        "handler-renamed", f"{cls}.{name}", f"{cls}.{after[moved[key]]}"
                    )
            elif key not in after:
                yield ApiChange("handler-removed", f"{cls}.{name}", None)
            elif after[key] != name:
                yield ApiChange("handler-renamed", f"{cls}.{name}", f"{cls}.{after[key]}")
        for key, name in sorted(after.items()):
            if key not in before and key not in moved.values():
                yield ApiChange("handler-added", None, f"{cls}.{name}")
        old_hooks, new_hooks = _hooks(c.old.protocol, side), _hooks(c.new.protocol, side)
        yield from (
            ApiChange("hook-removed", f"{cls}.{h}", None) for h in sorted(old_hooks - new_hooks)
        )
        yield from (
            ApiChange("hook-added", None, f"{cls}.{h}") for h in sorted(new_hooks - old_hooks)
        )


def render_section(changes: ApiChanges) -> str:
    """The report's "Python API changes" section (Markdown)."""
    lines = ["## Python API changes", ""]
    if not changes.changes:
        return "\n".join(
            [*lines, "None: code written against the old bindings works unchanged.", ""]
        )
    auto = sum(1 for c in changes.changes if c.automatic)
    lines += [
        (
            f"{len(changes.changes)} change(s); {auto} rewritten by `acp-codegen migrate PATH... "
            "--from OLD --to NEW`, the rest listed for a person (run `migrate --check` to see "
            "where your code uses them)."
        ),
        "",
    ]
    for kind, action in _ACTION.items():
        group = changes.of(kind)
        if group:
            lines += [f"### {kind.replace('-', ' ').capitalize()} ({len(group)}): {action}", ""]
            lines += [f"- {c.shown()}" + (f": {c.detail}" if c.detail else "") for c in group]
            lines.append("")
    return "\n".join(lines)
