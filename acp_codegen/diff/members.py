"""Struct comparison: fields added, removed, renamed, and every property of a kept field.

Owns the field-level rules. A struct is compared on its *effective* fields (its base chain's
fields first, then its own); a field that both revisions get from the same other definition
(a base, or a `$defs` entry flattened in by `allOf`) is skipped here because it is reported
where it is declared. Wire renames are recognised by two heuristics (docs/diff.md): the same
Python attribute name, or the same position with the same type and requiredness.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from acp_codegen.diff.collector import Collector
from acp_codegen.diff.facts import Facts, copied_from
from acp_codegen.diff.typecmp import constraint_move, constraints, show, split_null, strip_leniency
from acp_codegen.ir.nodes import Field, Scalar, Struct, TypeExpr


@dataclass(frozen=True)
class Slot:
    """A field as seen from one struct: where it is declared, and its position."""

    field: Field
    origin: str  # wire path of the declaring definition
    index: int


def effective(
    struct: Struct, facts: Facts, rename: Callable[[str], str] = str, depth: int = 0
) -> dict[str, Slot]:
    """Wire name -> slot for every field of a struct, its base chain included (tags skipped)."""
    own = rename(facts.path(struct.name))
    slots: list[tuple[Field, str]] = []
    base = facts.protocol.get(struct.base) if struct.base else None
    if isinstance(base, Struct) and depth < 20:
        slots.extend(
            (s.field, s.origin) for s in effective(base, facts, rename, depth + 1).values()
        )
    for f in struct.fields:
        if not f.tag:
            key = copied_from(struct, f)
            slots.append((f, own if key is None else rename(facts.path(_name_of(facts, key)))))
    return {f.wire_name: Slot(f, origin, i) for i, (f, origin) in enumerate(slots)}


def _name_of(facts: Facts, def_key: str) -> str:
    definition = facts.protocol.by_def_name(def_key)
    return def_key if definition is None else definition.name


def compare_struct(c: Collector, path: str, old: Struct, new: Struct) -> None:
    """Compare two revisions of one struct (found at wire path `path`)."""
    if old.extra != new.extra:
        if new.extra == "forbid":
            c.emit("STRUCT_CLOSED", path, f"{path} no longer accepts unknown properties", at=path)
        else:
            c.emit("STRUCT_OPENED", path, f"{path} now accepts unknown properties", at=path)
    before, after = effective(old, c.old, c.rename), effective(new, c.new)
    origins_before = {s.origin for s in before.values()}
    origins_after = {s.origin for s in after.values()}
    removed = [
        w
        for w in before
        if w not in after and (before[w].origin == path or before[w].origin not in origins_after)
    ]
    added = [
        w
        for w in after
        if w not in before and (after[w].origin == path or after[w].origin not in origins_before)
    ]
    for old_wire, new_wire in _renames(c, before, after, removed, added):
        removed.remove(old_wire)
        added.remove(new_wire)
        a, b = before[old_wire].field, after[new_wire].field
        c.emit(
            "FIELD_RENAMED",
            f"{path}.{new_wire}",
            f"field `{old_wire}` of {path} renamed on the wire to `{new_wire}`",
            at=path,
            old=old_wire,
            new=new_wire,
        )
        if a.py_name != b.py_name:
            c.emit(
                "ATTRIBUTE_RENAMED",
                f"{path}.{new_wire}",
                f"attribute `{a.py_name}` renamed to `{b.py_name}`",
                at=path,
                old=a.py_name,
                new=b.py_name,
            )
        compare_field(c, path, a, b)
    for wire in removed:
        f = before[wire].field
        rule_id = "REQUIRED_FIELD_REMOVED" if f.required else "FIELD_REMOVED"
        c.emit(
            rule_id,
            f"{path}.{wire}",
            f"{'required ' if f.required else ''}field `{wire}` removed from {path}",
            at=path,
        )
    for wire in added:
        f = after[wire].field
        if f.required:
            rule_id = "REQUIRED_FIELD_ADDED"
        else:
            rule_id = "FIELD_ADDED_TO_CLOSED_STRUCT" if old.extra == "forbid" else "FIELD_ADDED"
        kind = ("UNSTABLE " if f.unstable else "") + (
            "required" if f.required else "nullable optional" if f.nullable else "optional"
        )
        c.emit(
            rule_id,
            f"{path}.{wire}",
            f"new {kind} field `{wire}` (`{show(f.type, c.new)}`) in {path}",
            at=path,
            new=show(f.type, c.new),
        )
    for wire, slot in before.items():
        other = after.get(wire)
        if other is not None and not (slot.origin == other.origin != path):
            compare_field(c, path, slot.field, other.field)


def _renames(
    c: Collector,
    before: dict[str, Slot],
    after: dict[str, Slot],
    removed: list[str],
    added: list[str],
) -> list[tuple[str, str]]:
    """Pairs (old wire name, new wire name) judged to be one field renamed on the wire."""
    pairs: list[tuple[str, str]] = []
    free = list(added)
    for old_wire in removed:
        a = before[old_wire]
        match = next((w for w in free if after[w].field.py_name == a.field.py_name), None)
        if match is None:
            match = next(
                (
                    w
                    for w in free
                    if after[w].index == a.index
                    and after[w].field.required == a.field.required
                    and c.judge.verdict(
                        strip_leniency(a.field.type), strip_leniency(after[w].field.type)
                    )
                    == "same"
                ),
                None,
            )
        if match is not None:
            free.remove(match)
            pairs.append((old_wire, match))
    return pairs


def compare_field(c: Collector, owner: str, old: Field, new: Field) -> None:
    """Compare two revisions of one field of the struct at wire path `owner`."""
    path = f"{owner}.{new.wire_name}"
    what = f"field `{new.wire_name}` of {owner}"
    if old.required != new.required:
        rule_id = "FIELD_BECAME_REQUIRED" if new.required else "FIELD_BECAME_OPTIONAL"
        c.emit(
            rule_id, path, f"{what} is now {'required' if new.required else 'optional'}", at=owner
        )
    compare_type(
        c,
        path,
        what,
        strip_leniency(old.type),
        strip_leniency(new.type),
        owner=owner,
        nullable_rules=True,
    )
    if old.default_json != new.default_json:
        was, now = old.default_json or "none", new.default_json or "none"
        message = f"default of {what} changed: {was} -> {now}"
        c.emit(
            "DEFAULT_CHANGED", path, message, at=owner, old=old.default_json, new=new.default_json
        )
    lost = sorted(set(old.lenience) - set(new.lenience))
    gained = sorted(set(new.lenience) - set(old.lenience))
    if gained:
        c.emit(
            "LENIENCE_ADDED",
            path,
            f"{what} gained leniency {', '.join(gained)}",
            at=owner,
            new=", ".join(gained),
        )
    if lost:
        c.emit(
            "LENIENCE_REMOVED",
            path,
            f"{what} lost leniency {', '.join(lost)}",
            at=owner,
            old=", ".join(lost),
        )
    c.stability(path, what, old.unstable, new.unstable, at=owner)
    c.docs(path, what, old.description, new.description, at=owner)


def compare_type(
    c: Collector,
    path: str,
    what: str,
    old_type: TypeExpr,
    new_type: TypeExpr,
    *,
    owner: str,
    nullable_rules: bool,
) -> None:
    """Compare a field's (or an alias's) type: nullability, shape, constraints and formats."""
    a, a_null = split_null(old_type)
    b, b_null = split_null(new_type)
    if not nullable_rules or _any(a) or _any(b):
        a, b, a_null, b_null = old_type, new_type, False, False
    if a_null != b_null:
        rule_id = "FIELD_BECAME_NULLABLE" if b_null else "FIELD_BECAME_NON_NULLABLE"
        c.emit(
            rule_id,
            path,
            f"{what} {'now accepts' if b_null else 'no longer accepts'} null",
            at=owner,
        )
    verdict = c.judge.verdict(a, b)
    if verdict != "same":
        rule_id = {
            "widened": "TYPE_WIDENED",
            "narrowed": "TYPE_NARROWED",
            "changed": "TYPE_CHANGED",
        }[verdict]
        shown_a, shown_b = show(a, c.old), show(b, c.new)
        c.emit(
            rule_id,
            path,
            f"type of {what} {verdict}: `{shown_a}` -> `{shown_b}`",
            at=owner,
            old=shown_a,
            new=shown_b,
        )
    before, after = constraints(old_type), constraints(new_type)
    for key in sorted(set(before) | set(after)):
        x, y = before.get(key), after.get(key)
        if x == y:
            continue
        shown_x, shown_y = (None if x is None else str(x)), (None if y is None else str(y))
        if key.rsplit(".", 1)[-1] == "format":
            message = f"format of {what} changed: {shown_x or 'none'} -> {shown_y or 'none'}"
            c.emit("FORMAT_CHANGED", path, message, at=owner, old=shown_x, new=shown_y)
            continue
        move = constraint_move(key, x, y)
        rule_id = {
            "tightened": "CONSTRAINT_TIGHTENED",
            "relaxed": "CONSTRAINT_RELAXED",
            "changed": "CONSTRAINT_CHANGED",
        }[move]
        message = f"{key} of {what} {move}: {shown_x or 'none'} -> {shown_y or 'none'}"
        c.emit(rule_id, path, message, at=owner, old=shown_x, new=shown_y)


def _any(expr: TypeExpr) -> bool:
    return isinstance(expr, Scalar) and expr.kind == "any"
