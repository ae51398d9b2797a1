"""The comparison of two IRs: methods, definitions, unions, enums, aliases and generated names.

Owns the walk: definitions are matched by wire path (`acp_codegen.diff.facts`), each kind compared
by its own function (structs in `acp_codegen.diff.members`), methods by (handler side, wire name,
kind). The root messages (`AgentRequest`, ...) are envelopes: what they carry is reported as
method changes, so they are not compared field by field.
"""

from __future__ import annotations

from acp_codegen.diff.collector import Collector
from acp_codegen.diff.facts import Facts, facts_for, variant_key
from acp_codegen.diff.members import compare_struct, compare_type
from acp_codegen.diff.model import SIDES, Change, callers, parties
from acp_codegen.diff.renames import method_key
from acp_codegen.ir.build import is_unstable
from acp_codegen.ir.nodes import Alias, Definition, Enum, Method, Protocol, Struct, TaggedUnion

_KINDS = {"struct": "object", "union": "tagged union", "enum": "enum", "alias": "alias"}


def diff_protocols(old: Protocol, new: Protocol) -> tuple[Change, ...]:
    """Every change from the old IR to the new one, sorted (see `acp_codegen.diff.model`)."""
    c = Collector(facts_for(old), facts_for(new))
    compare_methods(c)
    compare_definitions(c)
    compare_generated(c)
    return c.sorted()


def _method_defs(facts: Facts) -> set[str]:
    """Wire paths of every method's params and result definitions."""
    names = {n for m in facts.protocol.methods for n in (m.params, m.result) if n is not None}
    return {facts.path(n) for n in names}


# -- methods ----------------------------------------------------------------------------------
def compare_methods(c: Collector) -> None:
    """Methods added, removed, moved to another side, or switched between request/notification."""
    before = {method_key(m): m for m in c.old.protocol.methods}
    after = {method_key(m): m for m in c.new.protocol.methods}
    gone = [k for k in before if k not in after and k not in c.method_renames]
    new = [k for k in after if k not in before and k not in c.method_renames.values()]
    for old_key, new_key in sorted(c.method_renames.items()):
        a, b = before[old_key], after[new_key]
        message = f"{a.kind} `{a.wire_name}` (handled by {a.side}) renamed to `{b.wire_name}`"
        c.emit(
            "METHOD_RENAMED",
            b.wire_name,
            message,
            at=b.wire_name,
            old=a.wire_name,
            new=b.wire_name,
            breaks=parties(b.side),
            senders=callers(b.side),
        )
        _compare_method(c, a, b)
    for key in list(gone):
        side, wire, kind = key
        other = next((k for k in new if k[:2] == (side, wire)), None)
        if other is not None:
            gone.remove(key)
            new.remove(other)
            c.emit(
                "METHOD_KIND_CHANGED",
                wire,
                f"method `{wire}` (handled by {side}) changed from {kind} to {other[2]}",
                at=wire,
                old=kind,
                new=other[2],
                breaks=parties(side),
                senders=callers(side),
            )
    for wire, kind in sorted({(k[1], k[2]) for k in gone} & {(k[1], k[2]) for k in new}):
        old_sides = sorted(k[0] for k in gone if k[1:] == (wire, kind))
        new_sides = sorted(k[0] for k in new if k[1:] == (wire, kind))
        if not set(old_sides) & set(new_sides):
            gone = [k for k in gone if k[1:] != (wire, kind)]
            new = [k for k in new if k[1:] != (wire, kind)]
            shown_old, shown_new = ", ".join(old_sides), ", ".join(new_sides)
            involved = tuple(
                sorted(
                    {p for side in old_sides + new_sides for p in parties(side)}, key=SIDES.index
                )
            )
            c.emit(
                "METHOD_SIDE_CHANGED",
                wire,
                f"{kind} `{wire}` is now handled by {shown_new} (was {shown_old})",
                at=wire,
                old=shown_old,
                new=shown_new,
                breaks=involved,
                senders=involved,
            )
    for key in sorted(gone):
        m = before[key]
        c.emit(
            "METHOD_REMOVED",
            m.wire_name,
            f"{m.kind} `{m.wire_name}` (handled by {m.side}) removed",
            at=m.wire_name,
            breaks=callers(m.side),
            senders=callers(m.side),
        )
    for key in sorted(new):
        m = after[key]
        unstable = "UNSTABLE " if m.unstable else ""
        c.emit(
            "METHOD_ADDED",
            m.wire_name,
            f"new {unstable}{m.kind} `{m.wire_name}` (handled by {m.side})",
            at=m.wire_name,
            breaks=(),
            senders=callers(m.side),
        )
    for key in sorted(set(before) & set(after)):
        _compare_method(c, before[key], after[key])


def _compare_method(c: Collector, old: Method, new: Method) -> None:
    wire = new.wire_name
    for slot, a, b in (("params", old.params, new.params), ("result", old.result, new.result)):
        pa = None if a is None else c.rename(c.old.path(a))
        pb = None if b is None else c.new.path(b)
        if pa != pb:
            rule_id = "METHOD_PARAMS_CHANGED" if slot == "params" else "METHOD_RESULT_CHANGED"
            c.emit(
                rule_id,
                wire,
                f"{slot} of `{wire}` (handled by {new.side}) changed: {pa} -> {pb}",
                at=wire,
                old=pa,
                new=pb,
                breaks=parties(new.side),
                senders=callers(new.side),
            )
    what = f"method `{wire}` (handled by {new.side})"
    if old.unstable != new.unstable:
        rule_id = "UNSTABLE_MARK_REMOVED" if old.unstable else "UNSTABLE_MARK_ADDED"
        message = (
            f"{what} stabilised (UNSTABLE marker removed)"
            if old.unstable
            else f"{what} is now marked UNSTABLE"
        )
        c.emit(
            rule_id,
            wire,
            message,
            at=wire,
            breaks=() if old.unstable else parties(new.side),
            senders=callers(new.side),
        )


# -- definitions ------------------------------------------------------------------------------
def compare_definitions(c: Collector) -> None:
    """Every definition matched by wire path, compared by kind."""
    method_defs = {c.rename(p) for p in _method_defs(c.old)} | _method_defs(c.new)
    for old_path, new_path in sorted(c.renames.items()):
        c.emit(
            "DEFINITION_RENAMED",
            new_path,
            f"definition {old_path} renamed to {new_path}",
            at=new_path,
            old=old_path,
            new=new_path,
        )
    olds: dict[str, Definition] = {c.rename(p): a for p, a in c.old.by_path.items()}
    for path in sorted(set(olds) | set(c.new.by_path)):
        if c.old.in_envelope(c.unrename(path)) or c.new.in_envelope(path):
            continue
        a, b = olds.get(path), c.new.at(path)
        if a is None or b is None:
            either = b if a is None else a
            named = either is not None and either.def_name is not None
            if named and path not in method_defs:
                rule_id = "DEFINITION_ADDED" if a is None else "DEFINITION_REMOVED"
                unstable = "UNSTABLE " if b is not None and _unstable(b) else ""
                c.emit(
                    rule_id,
                    path,
                    f"{unstable}definition {path} {'added' if a is None else 'removed'}",
                    at=path,
                )
            continue
        if a.kind != b.kind:
            c.emit(
                "DEFINITION_KIND_CHANGED",
                path,
                f"{path} changed from {_KINDS[a.kind]} to {_KINDS[b.kind]}",
                at=path,
                old=_KINDS[a.kind],
                new=_KINDS[b.kind],
            )
            continue
        if path.endswith("#tag"):
            continue  # an open union's tag enum mirrors its variants
        if path not in method_defs:  # a method's params/result: the method reports it
            c.stability(path, path, _unstable(a), _unstable(b), at=path)
        c.docs(path, path, a.description, b.description, at=path)
        if isinstance(a, Struct) and isinstance(b, Struct):
            compare_struct(c, path, a, b)
        elif isinstance(a, TaggedUnion) and isinstance(b, TaggedUnion):
            compare_union(c, path, a, b)
        elif isinstance(a, Enum) and isinstance(b, Enum):
            compare_enum(c, path, a, b)
        elif isinstance(a, Alias) and isinstance(b, Alias):
            compare_type(c, path, path, a.type, b.type, owner=path, nullable_rules=False)


def _unstable(definition: Definition) -> bool:
    if isinstance(definition, Struct):
        return definition.unstable
    return is_unstable(definition.description)


def compare_union(c: Collector, path: str, old: TaggedUnion, new: TaggedUnion) -> None:
    """Variants added or removed (judged by openness), tag property, open versus closed."""
    if old.tag_wire != new.tag_wire:
        c.emit(
            "UNION_TAG_CHANGED",
            path,
            f"tag of {path} changed from `{old.tag_wire}` to `{new.tag_wire}`",
            at=path,
            old=old.tag_wire,
            new=new.tag_wire,
        )
        return
    before = [variant_key(v.tag) for v in old.variants]
    after = [variant_key(v.tag) for v in new.variants]
    targets = {variant_key(v.tag): c.new.protocol.get(v.target) for v in new.variants}
    old_kind = "open" if old.unknown else "closed"
    for tag in after:
        # new senders send it; old receivers keep it if the old union was open
        if tag not in before:
            rule_id = "VARIANT_ADDED" if old.unknown else "VARIANT_ADDED_TO_CLOSED_UNION"
            target = targets.get(tag)
            unstable = "UNSTABLE " if target is not None and _unstable(target) else ""
            message = f"new {unstable}variant `{tag}` in {old_kind} union {path}"
            c.emit(rule_id, f"{path}[{tag}]", message, at=path, new=tag)
    for tag in before:
        # old senders send it; new receivers fall back if the new union is open
        if tag not in after:
            if new.unknown:
                message = (
                    f"variant `{tag}` removed from {path}: "
                    f"old senders' `{tag}` now falls to the fallback"
                )
                c.emit("VARIANT_REMOVED", f"{path}[{tag}]", message, at=path, old=tag)
            else:
                c.emit(
                    "VARIANT_REMOVED_FROM_CLOSED_UNION",
                    f"{path}[{tag}]",
                    f"variant `{tag}` removed from closed union {path}",
                    at=path,
                    old=tag,
                )
    if bool(old.unknown) != bool(new.unknown):
        if new.unknown:
            c.emit("UNION_OPENED", path, f"{path} now keeps unknown variants", at=path)
        else:
            c.emit("UNION_CLOSED", path, f"{path} no longer accepts unknown variants", at=path)
    if old.lenient_tag != new.lenient_tag:
        rule_id = "LENIENCE_ADDED" if new.lenient_tag else "LENIENCE_REMOVED"
        verb = "now treats" if new.lenient_tag else "no longer treats"
        c.emit(
            rule_id,
            f"{path}.{new.tag_wire}",
            f"{path} {verb} a malformed `{new.tag_wire}` as absent",
            at=path,
        )


def compare_enum(c: Collector, path: str, old: Enum, new: Enum) -> None:
    """Values added or removed (judged by openness), open versus closed, value descriptions."""
    before = {v.value: v for v in old.values}
    after = {v.value: v for v in new.values}
    for value in after:
        if value not in before:
            rule_id = "ENUM_VALUE_ADDED" if old.open else "CLOSED_ENUM_VALUE_ADDED"
            c.emit(
                rule_id,
                f"{path}[{value}]",
                f"new value `{value}` in {'open' if old.open else 'closed'} enum {path}",
                at=path,
                new=value,
            )
    for value, known in before.items():
        if value not in after:
            if new.open:
                c.emit(
                    "ENUM_VALUE_REMOVED",
                    f"{path}[{value}]",
                    f"value `{value}` removed from open enum {path}: now an unknown string",
                    at=path,
                    old=value,
                )
            else:
                c.emit(
                    "CLOSED_ENUM_VALUE_REMOVED",
                    f"{path}[{value}]",
                    f"value `{value}` removed from closed enum {path}",
                    at=path,
                    old=value,
                )
        else:
            c.docs(
                f"{path}[{value}]",
                f"value `{value}` of {path}",
                known.description,
                after[value].description,
                at=path,
            )
    if old.open != new.open:
        if new.open:
            c.emit("ENUM_OPENED", path, f"{path} now accepts any string", at=path)
        else:
            c.emit("ENUM_CLOSED", path, f"{path} no longer accepts unknown strings", at=path)


# -- generated code ---------------------------------------------------------------------------
def compare_generated(c: Collector) -> None:
    """Generated classes renamed (same wire path, new Python name) or removed."""
    new_names = {d.name for d in c.new.protocol.definitions}
    for definition in c.old.protocol.definitions:
        path = c.rename(c.old.path(definition.name))
        other = c.new.at(path)
        if other is not None and other.name != definition.name:
            c.emit(
                "CLASS_RENAMED",
                path,
                f"class `{definition.name}` renamed to `{other.name}`",
                at=path,
                old=definition.name,
                new=other.name,
            )
        elif other is None and definition.name not in new_names:
            c.emit(
                "CLASS_REMOVED",
                path,
                f"class `{definition.name}` removed from the generated package",
                at=path,
                old=definition.name,
            )
