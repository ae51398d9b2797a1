"""Comparing type expressions across two revisions: shape, nullability, constraints, formats.

Owns the question "does every value the old type accepts still pass the new type (and the
other way round)?" for IR type expressions. References are compared by wire path (what they
reference is compared on its own), aliases are looked through, `null` is split off (it has its
own rules) and constraints and formats are collected separately so each gets its own rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from acp_codegen.diff.facts import Facts
from acp_codegen.ir.nodes import Alias, ArrayOf, Const, Enum, MapOf, Ref, Scalar, TypeExpr, UnionOf

Verdict = Literal["same", "widened", "narrowed", "changed"]

_MIN_KEYS = ("minLength", "minItems", "minimum", "exclusiveMinimum")
_MAX_KEYS = ("maxLength", "maxItems", "maximum", "exclusiveMaximum")


def normalise(expr: TypeExpr, facts: Facts, rename: Callable[[str], str] = str) -> TypeExpr:
    """Refs renamed to (mapped) wire paths; constraints, formats and leniency flags dropped."""
    if isinstance(expr, Ref):
        return Ref(rename(facts.path(expr.name)))
    if isinstance(expr, Scalar):
        return Scalar(expr.kind)
    if isinstance(expr, ArrayOf):
        return ArrayOf(normalise(expr.item, facts, rename))
    if isinstance(expr, MapOf):
        return MapOf(normalise(expr.value, facts, rename))
    if isinstance(expr, UnionOf):
        return UnionOf(tuple(normalise(o, facts, rename) for o in expr.options))
    return expr


def split_null(expr: TypeExpr) -> tuple[TypeExpr, bool]:
    """The type without its `null` option, and whether it had one."""
    if isinstance(expr, UnionOf):
        rest = tuple(o for o in expr.options if not _is_null(o))
        if len(rest) == len(expr.options):
            return expr, False
        if not rest:
            return Scalar("none"), False
        return (rest[0] if len(rest) == 1 else UnionOf(rest)), True
    return expr, False


def _is_null(expr: TypeExpr) -> bool:
    return (isinstance(expr, Scalar) and expr.kind == "none") or (
        isinstance(expr, Const) and expr.value is None
    )


class TypeJudge:
    """Judges type changes between an old and a new revision."""

    def __init__(self, old: Facts, new: Facts, rename: Callable[[str], str] = str) -> None:
        self.old = old
        self.new = new
        self.rename = rename  # old wire path -> its place in the new revision

    def path(self, name: str, facts: Facts) -> str:
        """The wire path of a referenced definition, old ones mapped into the new revision."""
        path = facts.path(name)
        return self.rename(path) if facts is self.old else path

    def verdict(self, old: TypeExpr, new: TypeExpr) -> Verdict:
        """How the set of accepted values moved from the old type to the new one."""
        if normalise(old, self.old, self.rename) == normalise(new, self.new):
            return "same"
        wider = self.covers(new, self.new, old, self.old, 0)
        narrower = self.covers(old, self.old, new, self.new, 0)
        if wider and narrower:
            return "same"
        return "widened" if wider else "narrowed" if narrower else "changed"

    def covers(self, a: TypeExpr, fa: Facts, b: TypeExpr, fb: Facts, depth: int) -> bool:
        """Whether type `a` (in revision `fa`) accepts every value of type `b` (in `fb`)."""
        if depth > 12:
            return True
        if (
            isinstance(a, Ref)
            and isinstance(b, Ref)
            and self.path(a.name, fa) == self.path(b.name, fb)
        ):
            return True
        a, b = _expand(a, fa), _expand(b, fb)
        if isinstance(b, UnionOf):
            return all(self.covers(a, fa, o, fb, depth + 1) for o in b.options)
        if isinstance(a, Scalar) and a.kind == "any":
            return True
        if isinstance(a, UnionOf):
            return any(self.covers(o, fa, b, fb, depth + 1) for o in a.options)
        if isinstance(b, Scalar) and b.kind == "any":
            return False
        if isinstance(a, Scalar):
            kind = _json_kind(b, fb)
            return kind == a.kind or (a.kind == "number" and kind == "int")
        if isinstance(a, Const):
            return isinstance(b, Const) and type(a.value) is type(b.value) and a.value == b.value
        if isinstance(a, ArrayOf):
            return isinstance(b, ArrayOf) and self.covers(a.item, fa, b.item, fb, depth + 1)
        if isinstance(a, MapOf):
            return isinstance(b, MapOf) and self.covers(a.value, fa, b.value, fb, depth + 1)
        target = fa.protocol.get(a.name)
        if isinstance(target, Enum):
            values = {v.value for v in target.values}
            if isinstance(b, Const) and isinstance(b.value, str):
                return target.open or b.value in values
            if isinstance(b, Ref) and isinstance(other := fb.protocol.get(b.name), Enum):
                return target.open or (not other.open and {v.value for v in other.values} <= values)
            return target.open and isinstance(b, Scalar) and b.kind == "str"
        return False


def _expand(expr: TypeExpr, facts: Facts) -> TypeExpr:
    """Look through a reference to an alias (one level)."""
    if isinstance(expr, Ref):
        target = facts.protocol.get(expr.name)
        if isinstance(target, Alias):
            return target.type
    return expr


def _json_kind(expr: TypeExpr, facts: Facts) -> str:
    """The JSON kind of a (non-union) type: str, int, number, bool, none, object, array."""
    if isinstance(expr, Scalar):
        return expr.kind
    if isinstance(expr, Const):
        value = expr.value
        return (
            "none"
            if value is None
            else "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "str"
        )
    if isinstance(expr, ArrayOf):
        return "array"
    if isinstance(expr, MapOf):
        return "object"
    if isinstance(expr, Ref):
        target = facts.protocol.get(expr.name)
        return "str" if isinstance(target, Enum) else "object"
    return "union"


def constraints(expr: TypeExpr, loc: str = "") -> dict[str, Any]:
    """Constraints and formats by location (`minLength`, `[].minLength`, `format`, ...)."""
    found: dict[str, Any] = {}
    expr, _ = split_null(expr)
    if isinstance(expr, Scalar):
        found.update((loc + key, value) for key, value in expr.constraints)
        if expr.format is not None:
            found[loc + "format"] = expr.format
    elif isinstance(expr, ArrayOf):
        found.update((loc + key, value) for key, value in expr.constraints)
        found.update(constraints(expr.item, loc + "[]."))
    elif isinstance(expr, MapOf):
        found.update(constraints(expr.value, loc + "{}."))
    return found


def constraint_move(key: str, old: Any, new: Any) -> Literal["tightened", "relaxed", "changed"]:
    """Whether a constraint change accepts fewer values, more values, or different ones."""
    name = key.rsplit(".", 1)[-1]
    if old is None:
        return "tightened"
    if new is None:
        return "relaxed"
    if name in _MIN_KEYS and isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return "tightened" if new > old else "relaxed"
    if name in _MAX_KEYS and isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return "tightened" if new < old else "relaxed"
    if name == "uniqueItems":
        return "tightened" if new else "relaxed"
    return "changed"


def strip_leniency(expr: TypeExpr) -> TypeExpr:
    """The type without `skip_invalid` flags (they are leniency hints, compared separately)."""
    if isinstance(expr, ArrayOf):
        return replace(expr, item=strip_leniency(expr.item), skip_invalid=False)
    if isinstance(expr, UnionOf):
        return UnionOf(tuple(strip_leniency(o) for o in expr.options))
    if isinstance(expr, MapOf):
        return MapOf(strip_leniency(expr.value))
    return expr


def show(expr: TypeExpr, facts: Facts) -> str:
    """A compact, wire-path based rendering of a type (`string | null`, `array<ToolCall>`)."""
    if isinstance(expr, Ref):
        return facts.path(expr.name)
    if isinstance(expr, Scalar):
        base = {"str": "string", "int": "integer", "none": "null"}.get(expr.kind, expr.kind)
        return f"{base}({expr.format})" if expr.format else base
    if isinstance(expr, Const):
        return (
            "null"
            if expr.value is None
            else repr(expr.value) if not isinstance(expr.value, str) else f'"{expr.value}"'
        )
    if isinstance(expr, ArrayOf):
        return f"array<{show(expr.item, facts)}>"
    if isinstance(expr, MapOf):
        return f"map<{show(expr.value, facts)}>"
    return " | ".join(show(o, facts) for o in expr.options)
