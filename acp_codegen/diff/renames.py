"""Renamed definitions: `$defs` entries that got a new key but stand in the same place.

A `$defs` key never travels on the wire, so a renamed definition is not a wire change by
itself. Owns finding them: a definition that exists only in the old revision is paired with
one that exists only in the new revision when a kept method uses them as its params/result, or
a kept field's type moved from one to the other. Paired definitions are compared as one (their
hoisted children follow the new prefix), and the rename is reported as `DEFINITION_RENAMED`
plus a generated-code `CLASS_RENAMED`.

Owns renamed methods too: a method removed and one added on the same side, of the same kind,
whose params and result are the same definitions, or definitions only one revision has with the
same field names (`AuthenticateRequest` -> `LoginAuthRequest`), are one method renamed; their
params and result definitions are then paired like any rename.
"""

from __future__ import annotations

from collections.abc import Callable

from acp_codegen.diff.facts import Facts
from acp_codegen.diff.typecmp import split_null
from acp_codegen.ir.nodes import ArrayOf, MapOf, Method, Ref, Struct, TypeExpr

_SEPARATORS = (".", "[", "(", "#", "|")

MethodKey = tuple[str, str, str]
"""(handling side, wire name, request/notification): how methods are matched."""


def method_key(method: Method) -> MethodKey:
    """The key methods are matched by across revisions."""
    return (method.side, method.wire_name, method.kind)


def find_method_renames(old: Facts, new: Facts) -> dict[MethodKey, MethodKey]:
    """Old method key -> new method key for every removed method judged renamed to an added one."""
    before = {method_key(m): m for m in old.protocol.methods}
    after = {method_key(m): m for m in new.protocol.methods}
    gone = [
        m
        for k, m in before.items()
        if k not in after and (k[0], k[1]) not in {(x[0], x[1]) for x in after}
    ]
    added = [
        m
        for k, m in after.items()
        if k not in before and (k[0], k[1]) not in {(x[0], x[1]) for x in before}
    ]
    candidates = {
        method_key(a): [method_key(b) for b in added if _same_signature(old, new, a, b)]
        for a in gone
    }
    chosen = {a: bs[0] for a, bs in candidates.items() if len(bs) == 1}
    taken = [b for b in chosen.values()]
    return {a: b for a, b in sorted(chosen.items()) if taken.count(b) == 1}


def _same_signature(old: Facts, new: Facts, a: Method, b: Method) -> bool:
    """Same side and kind, and params and result that are the same (or equivalent) definitions."""
    if (a.side, a.kind) != (b.side, b.kind):
        return False
    return all(
        _same_definition(old, new, x, y) for x, y in ((a.params, b.params), (a.result, b.result))
    )


def _same_definition(old: Facts, new: Facts, x: str | None, y: str | None) -> bool:
    if x is None or y is None:
        return x is None and y is None
    px, py = old.path(x), new.path(y)
    if px == py:
        return True
    a, b = old.at(px), new.at(py)
    if (
        px in new.by_path
        or py in old.by_path
        or not isinstance(a, Struct)
        or not isinstance(b, Struct)
    ):
        return False
    return {f.wire_name for f in a.fields} == {f.wire_name for f in b.fields}


def find_renames(
    old: Facts, new: Facts, methods: dict[MethodKey, MethodKey] | None = None
) -> dict[str, str]:
    """Old wire path -> new wire path for every named definition judged renamed."""
    renames: dict[str, str] = {}

    def pair(a: str | None, b: str | None) -> None:
        """Record old path `a` -> new path `b` when both are named and exist on one side only."""
        if a is None or b is None or a == b or a in renames or b in renames.values():
            return
        if a in new.by_path or b in old.by_path:
            return
        if not old.by_path[a].def_name or not new.by_path[b].def_name:
            return
        renames[a] = b

    before = {method_key(m): m for m in old.protocol.methods}
    moved = {b: a for a, b in (methods or {}).items()}
    for m in new.protocol.methods:
        o = before.get(moved.get(method_key(m), method_key(m)))
        if o is not None:
            for x, y in ((o.params, m.params), (o.result, m.result)):
                if x is not None and y is not None:
                    pair(old.path(x), new.path(y))
    for _ in range(4):  # a pair found inside a renamed struct can reveal another
        count = len(renames)
        mapper = path_mapper(renames)
        for path, a in sorted(old.by_path.items()):
            b = new.at(mapper(path))
            if not isinstance(a, Struct) or not isinstance(b, Struct):
                continue
            fields = {f.wire_name: f for f in b.fields}
            for f in a.fields:
                other = fields.get(f.wire_name)
                if other is not None:
                    x, y = _ref(f.type), _ref(other.type)
                    pair(None if x is None else old.path(x), None if y is None else new.path(y))
        if len(renames) == count:
            break
    return renames


def _ref(expr: TypeExpr) -> str | None:
    """The definition a field's type is about: `X`, `X | null`, `array<X>`, `map<X>`."""
    expr, _ = split_null(expr)
    if isinstance(expr, ArrayOf):
        expr = expr.item
    elif isinstance(expr, MapOf):
        expr = expr.value
    return expr.name if isinstance(expr, Ref) else None


def path_mapper(renames: dict[str, str]) -> Callable[[str], str]:
    """A function taking an old wire path to where it lives in the new revision."""
    if not renames:
        return lambda path: path

    def mapped(path: str) -> str:
        """The path itself, or the renamed definition (or prefix) it lives under."""
        if path in renames:
            return renames[path]
        for old_prefix in sorted(renames, key=len, reverse=True):
            if (
                path.startswith(old_prefix)
                and path[len(old_prefix) : len(old_prefix) + 1] in _SEPARATORS
            ):
                return renames[old_prefix] + path[len(old_prefix) :]
        return path

    return mapped
