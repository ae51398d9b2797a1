"""Deterministic JSON instances of a schema definition (used by `probe client` for every
session/update variant, and by the model tests for their references).

`Instances.valid(key, seed)` builds a value for one `$defs` entry by walking its schema (refs,
`allOf`, one `anyOf`/`oneOf` alternative, types, constraints), then keeps it only if
`jsonschema` (Draft 2020-12) says it is valid, so generator shortcuts never produce a wrong
value. By default values favour what breaks lossless models: unknown fields, unknown union tags
and enum values (`_vendor_...`, future names), `null` next to omitted, big and negative integers,
floats with integral values, unnormalised URIs and date-times, non-ASCII text. With
`conforming=True` they are what a conforming sender may send: no unknown fields outside `_meta`,
no unknown non-`_` values (extension values are `_`-prefixed).
"""

from __future__ import annotations

import copy
import random
from typing import Any

from jsonschema import Draft202012Validator

Path_ = tuple[str | int, ...]

_WORDS = [
    "alpha",
    "Beta",
    "γάμμα",
    "délta",
    "εψ",
    "zeta 🙂",
    'quote"d',
    "back\\slash",
    "tab\there",
    "",
]
_URIS = [
    "HTTPS://Example.COM:443/a/../b/%7Euser?q=1&q=2#Frag",
    "file:///home/u/Project/Main.py",
    "urn:ISBN:0451450523",
    "mailto:X@Example.com",
]
_DATES = [
    "2024-02-29T23:59:60Z",
    "2024-01-01T00:00:00.000000001+05:30",
    "2025-12-31t10:00:00z",
    "1999-01-01T00:00:00-00:00",
]
_INTS = [0, 1, 7, 42, 65535, 2**31 - 1, 2**53 + 1, 2**63 - 1, -1, -(2**31)]
_FLOATS = [0.5, -1.25, 3.0, 1e-7, 1.5e300, -0.0, 123456789.125]
_UNKNOWN_STRINGS = ["_vendor_thing", "future_value", "_zed.extension/v2", "UPPER_future"]
_EXTENSION_STRINGS = ["_vendor_thing", "_zed.extension/v2"]


def _types(schema: dict[str, Any]) -> list[str] | None:
    t = schema.get("type")
    if t is None:
        return None
    return [t] if isinstance(t, str) else list(t)


class Instances:
    """Instance generation and validation for one schema document."""

    def __init__(self, doc: dict[str, Any], *, conforming: bool = False) -> None:
        self.doc = doc
        self.conforming = conforming
        self.defs: dict[str, Any] = doc["$defs"]
        self._validators: dict[str, Draft202012Validator] = {}
        self._sub: dict[int, Draft202012Validator] = {}

    # -- jsonschema -------------------------------------------------------------------------------
    def validator(self, key: str) -> Draft202012Validator:
        """The Draft 2020-12 validator of one `$defs` entry (formats not asserted, as the spec
        says)."""
        v = self._validators.get(key)
        if v is None:
            v = Draft202012Validator({"$defs": self.defs, "$ref": f"#/$defs/{key}"})
            self._validators[key] = v
        return v

    def sub_valid(self, schema: Any, value: Any) -> bool:
        """Whether `value` is valid against a sub-schema of this document."""
        if schema is True:
            return True
        if schema is False:
            return False
        v = self._sub.get(id(schema))
        if v is None:
            v = Draft202012Validator({"$defs": self.defs, "allOf": [schema]})
            self._sub[id(schema)] = v
        return bool(v.is_valid(value))

    # -- generation -------------------------------------------------------------------------------
    def valid(self, key: str, seed: int, tries: int = 12) -> Any:
        """A valid instance of `$defs[key]`, or `_NONE` if none was found in `tries` attempts."""
        for attempt in range(tries):
            rng = random.Random(f"{key}:{seed}:{attempt}")
            try:
                value = _Gen(self, rng, shallow=attempt >= tries // 2).value(
                    {"$ref": f"#/$defs/{key}"}, 0
                )
            except _Impossible:
                continue
            if self.validator(key).is_valid(value):
                return value
        return NONE


class _Impossible(Exception):
    pass


class _NoneType:
    def __repr__(self) -> str:
        return "NONE"


NONE: Any = _NoneType()


class _Gen:
    MAX_DEPTH = 7

    def __init__(self, owner: Instances, rng: random.Random, *, shallow: bool) -> None:
        self.owner = owner
        self.rng = rng
        self.shallow = shallow

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def parts(self, schema: Any, depth: int) -> list[dict[str, Any]]:
        """The schema with refs and `allOf` flattened and one `anyOf`/`oneOf` alternative chosen."""
        out: list[dict[str, Any]] = []
        todo = [schema]
        while todo:
            s = todo.pop(0)
            if s is True or s is None:
                continue
            if s is False:
                raise _Impossible()
            if not isinstance(s, dict):
                continue
            own = {k: v for k, v in s.items() if k not in ("$ref", "allOf", "anyOf", "oneOf")}
            out.append(own)
            if isinstance(s.get("$ref"), str):
                todo.append(self.owner.defs[s["$ref"].rsplit("/", 1)[-1]])
            todo.extend(s.get("allOf") or ())
            for key in ("anyOf", "oneOf"):
                options = s.get(key)
                if options:
                    todo.append(self.pick(options, depth))
        return out

    def pick(self, options: list[Any], depth: int) -> Any:
        if depth >= self.MAX_DEPTH or self.shallow:
            simple = [
                o
                for o in options
                if isinstance(o, dict) and o.get("type") in ("null", "string", "boolean", "integer")
            ]
            if simple:
                return self.rng.choice(simple)
        return self.rng.choice(options)

    def value(self, schema: Any, depth: int) -> Any:
        parts = self.parts(schema, depth)
        for p in parts:
            if "const" in p:
                return copy.deepcopy(p["const"])
        for p in parts:
            if isinstance(p.get("enum"), list):
                return copy.deepcopy(self.rng.choice(p["enum"]))
        allowed: set[str] | None = None
        for p in parts:
            t = _types(p)
            if t is not None:
                allowed = set(t) if allowed is None else allowed & set(t)
        if allowed is None:
            if any("properties" in p for p in parts):
                allowed = {"object"}
            elif any("items" in p for p in parts):
                allowed = {"array"}
            else:
                return self.anything(depth)
        if not allowed:
            raise _Impossible()
        choices = sorted(allowed)
        if "null" in choices and len(choices) > 1:
            non_null = [c for c in choices if c != "null"]
            kind = (
                "null"
                if self.chance(0.2 if depth < self.MAX_DEPTH and not self.shallow else 0.8)
                else self.rng.choice(non_null)
            )
        else:
            kind = self.rng.choice(choices)
        if kind == "integer" and "number" in allowed and self.chance(0.5):
            kind = "number"
        return getattr(self, "make_" + kind)(parts, depth)

    def anything(self, depth: int) -> Any:
        options: list[Any] = [
            None,
            True,
            3,
            2.5,
            "text",
            [1, "two", None],
            {"nested": {"k": [1.0, 2]}},
        ]
        return copy.deepcopy(self.rng.choice(options if depth < self.MAX_DEPTH else options[:5]))

    @staticmethod
    def _get(parts: list[dict[str, Any]], key: str) -> Any:
        values = [p[key] for p in parts if key in p]
        return values

    def make_null(self, parts: list[dict[str, Any]], depth: int) -> None:
        return None

    def make_boolean(self, parts: list[dict[str, Any]], depth: int) -> bool:
        return self.chance(0.5)

    def make_integer(self, parts: list[dict[str, Any]], depth: int) -> int:
        lo = max(self._get(parts, "minimum") or [-(2**63)])
        hi = min(self._get(parts, "maximum") or [2**64 - 1])
        fitting = [i for i in _INTS if lo <= i <= hi]
        if fitting and self.chance(0.8):
            return int(self.rng.choice(fitting))
        return int(self.rng.randint(int(max(lo, -(10**6))), int(min(hi, 10**6))))

    def make_number(self, parts: list[dict[str, Any]], depth: int) -> float | int:
        lo = max(self._get(parts, "minimum") or [float("-inf")])
        hi = min(self._get(parts, "maximum") or [float("inf")])
        values: list[float | int] = [f for f in _FLOATS if lo <= f <= hi] + [
            i for i in _INTS[:6] if lo <= i <= hi
        ]
        if not values:
            return float(lo if lo != float("-inf") else hi)
        return self.rng.choice(values)

    def make_string(self, parts: list[dict[str, Any]], depth: int) -> str:
        fmt = next(iter(self._get(parts, "format")), None)
        pattern = next(iter(self._get(parts, "pattern")), None)
        if pattern == "^[A-Z]{3}$":
            return str(self.rng.choice(["USD", "EUR", "JPY", "XTS"]))
        if fmt == "uri":
            value = str(self.rng.choice(_URIS))
        elif fmt == "date-time":
            value = str(self.rng.choice(_DATES))
        elif self.chance(0.3):
            value = str(
                self.rng.choice(_EXTENSION_STRINGS if self.owner.conforming else _UNKNOWN_STRINGS)
            )
        else:
            value = " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(1, 3)))
        min_len = max(self._get(parts, "minLength") or [0])
        if len(value) < min_len:
            value = value + "x" * (min_len - len(value))
        return value

    def make_array(self, parts: list[dict[str, Any]], depth: int) -> list[Any]:
        items = [p["items"] for p in parts if "items" in p]
        lo = max(self._get(parts, "minItems") or [0])
        hi = min(self._get(parts, "maxItems") or [lo + 3])
        n = (
            lo
            if depth >= self.MAX_DEPTH or self.shallow
            else self.rng.randint(lo, max(lo, min(hi, lo + 3)))
        )
        schema = {"allOf": items} if items else True
        return [self.value(schema, depth + 1) for _ in range(n)]

    def make_object(self, parts: list[dict[str, Any]], depth: int) -> dict[str, Any]:
        props: dict[str, list[Any]] = {}
        required: set[str] = set()
        closed = False
        extra_schemas: list[Any] = []
        for p in parts:
            for name, sub in (p.get("properties") or {}).items():
                props.setdefault(name, []).append(sub)
            required |= set(p.get("required") or ())
            extra = p.get("additionalProperties", True)
            if extra is False:
                closed = True
            elif isinstance(extra, dict):
                extra_schemas.append(extra)
        out: dict[str, Any] = {}
        deep = depth >= self.MAX_DEPTH or self.shallow
        names = list(props)
        self.rng.shuffle(names)  # wire order is not significant; the models must not care
        for name in names:
            if name in required or (not deep and self.chance(0.55)):
                out[name] = self.value({"allOf": props[name]}, depth + 1)
        if not props and extra_schemas and not deep:  # a map
            for i in range(self.rng.randint(0, 2)):
                out[f"key{i}"] = self.value({"allOf": extra_schemas}, depth + 1)
        elif not closed and not deep and not self.owner.conforming and self.chance(0.35):
            name = self.rng.choice(["_vendorExtra", "futureField", "x"])
            if name not in props:
                out[name] = self.value(
                    {"allOf": extra_schemas} if extra_schemas else True, depth + 1
                )
        return out


def instance_for(owner: Instances, schema: dict[str, Any], seed: int, tries: int = 12) -> Any:
    """A value for an inline sub-schema of the document (a union branch, say), or `NONE`."""
    validator = Draft202012Validator({"$defs": owner.defs, **schema})
    for attempt in range(tries):
        rng = random.Random(f"inline:{seed}:{attempt}")
        try:
            value = _Gen(owner, rng, shallow=attempt >= tries // 2).value(schema, 0)
        except _Impossible:
            continue
        if validator.is_valid(value):
            return value
    return NONE
