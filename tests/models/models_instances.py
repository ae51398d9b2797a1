"""Deterministic JSON instances of a schema definition, their mutants, and the reference verdicts.

`Instances.valid(key, seed)` builds a value for one `$defs` entry by walking its schema (refs,
`allOf`, one `anyOf`/`oneOf` alternative, types, constraints), then keeps it only if
`jsonschema` (Draft 2020-12) says it is valid, so generator shortcuts never produce a wrong
reference. Values favour what breaks lossless models: unknown fields, unknown union tags and enum
values (`_vendor_...`, future names), `null` next to omitted, big and negative integers, floats
with integral values, unnormalised URIs and date-times, non-ASCII text.

`mutants()` derives invalid-looking variants (a field dropped, a value of another JSON type, an
unknown string in place of a known one); `Leniency.explains()` says whether a leniency hint on
the mutated path lets a model accept a mutant `jsonschema` rejects.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from acp_codegen.probe.instances import NONE, Instances

__all__ = ["NONE", "Instances", "Leniency", "Mutant", "mutants", "same_json"]

Path_ = tuple[str | int, ...]


# -- mutants --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """A changed copy of an instance: `kind` is "drop" (key `path[-1]` removed) or "replace"."""

    kind: str
    path: Path_
    value: Any
    note: str


def _walk(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))


def _replace(root: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(root)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return out


def _drop(root: Any, path: Path_) -> Any:
    out = copy.deepcopy(root)
    node = out
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return out


def _other_type(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.choice(["true", 1, None])
    if isinstance(value, int):
        return rng.choice(["12", 1.5, True, None])
    if isinstance(value, float):
        return rng.choice(["1.5", True, None, [1.5]])
    if isinstance(value, str):
        return rng.choice([12, True, None, [value], {"text": value}])
    if value is None:
        return rng.choice([{}, "null", 0])
    if isinstance(value, list):
        return rng.choice([{}, "list", None, 3])
    return rng.choice([[], "object", None, 7])


def mutants(value: Any, rng: random.Random, limit: int) -> list[Mutant]:
    """Up to `limit` mutants: drop a key, change a value's JSON type, put an unknown string."""
    nodes = list(_walk(value))
    out: list[Mutant] = []
    candidates: list[tuple[str, Path_]] = []
    for path, node in nodes:
        if path:
            candidates.append(("replace", path))
            if isinstance(node, str):
                candidates.append(("string", path))
        if isinstance(node, dict):
            candidates.extend(("drop", path + (k,)) for k in node)
    if not candidates:
        candidates = [("replace", ())]
    rng.shuffle(candidates)
    for kind, path in candidates[:limit]:
        if kind == "drop":
            out.append(Mutant("drop", path, _drop(value, path), f"drop {list(path)}"))
        elif kind == "string":
            new = rng.choice(["__not_a_known_value__", "_vendor_value"])
            out.append(
                Mutant("replace", path, _replace(value, path, new), f"{list(path)} = {new!r}")
            )
        else:
            old = value
            for step in path:
                old = old[step]
            new = _other_type(old, rng)
            out.append(
                Mutant("replace", path, _replace(value, path, new), f"{list(path)} = {new!r}")
            )
    if not any(m.path == () for m in out):  # the whole value of another type, too
        new = _other_type(value, rng)
        out.append(Mutant("replace", (), new, f"whole value = {new!r}"))
    return out


# -- leniency on a path ---------------------------------------------------------------------------


class Leniency:
    """Which `x-deserialize-*` hints apply along an instance path (computed with `jsonschema`)."""

    def __init__(self, inst: Instances) -> None:
        self.inst = inst

    def applicable(self, schema: Any, value: Any) -> list[dict[str, Any]]:
        """Every sub-schema that applies to `value` here: refs, `allOf`, and the `anyOf`/`oneOf`
        alternatives `value` is valid against."""
        out: list[dict[str, Any]] = []
        seen: set[int] = set()
        todo = [schema]
        while todo:
            s = todo.pop()
            if not isinstance(s, dict) or id(s) in seen:
                continue
            seen.add(id(s))
            out.append(s)
            if isinstance(s.get("$ref"), str):
                todo.append(self.inst.defs[s["$ref"].rsplit("/", 1)[-1]])
            todo.extend(s.get("allOf") or ())
            for key in ("anyOf", "oneOf"):
                for option in s.get(key) or ():
                    if self.inst.sub_valid(option, value):
                        todo.append(option)
        return out

    def hints_along(self, key: str, original: Any, path: Path_) -> list[tuple[set[str], set[str]]]:
        """For each step of `path`: (hints of the property/item schemas at that step, hints of the
        container at that step), the container being the object or array the step indexes."""
        steps: list[tuple[set[str], set[str]]] = []
        schemas: list[Any] = [{"$ref": f"#/$defs/{key}"}]
        value = original
        for step in path:
            here = [s for sch in schemas for s in self.applicable(sch, value)]
            container = {h for s in here for h in _hint_names(s)}
            children: list[Any] = []
            for s in here:
                if isinstance(step, str):
                    props = s.get("properties")
                    if isinstance(props, dict) and step in props:
                        children.append(props[step])
                    elif isinstance(s.get("additionalProperties"), dict):
                        children.append(s["additionalProperties"])
                elif "items" in s:
                    children.append(s["items"])
            value = value[step] if isinstance(value, (dict, list)) else None
            child_hints = {
                h for c in children for s in self.applicable(c, value) for h in _hint_names(s)
            }
            steps.append((child_hints, container))
            schemas = children
        return steps

    def explains(self, key: str, original: Any, mutant: Mutant) -> str | None:
        """The hint (and where) that lets a model accept `mutant`, if one applies."""
        path = mutant.path
        steps = self.hints_along(key, original, path)
        upto = len(path) if mutant.kind == "replace" else len(path) - 1
        for i in range(upto):
            own, container = steps[i]
            if "default_on_error" in own:
                return f"default_on_error at {list(path[: i + 1])}"
            if "default_on_null" in own and i == len(path) - 1 and _at(mutant.value, path) is None:
                return f"default_on_null at {list(path[: i + 1])}"
            if isinstance(path[i], int) and "skip_invalid_items" in container:
                return f"skip_invalid_items at {list(path[:i])}"
        return None


def _at(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value


def _hint_names(schema: dict[str, Any]) -> set[str]:
    names = set()
    if schema.get("x-deserialize-default-on-error"):
        names.add("default_on_error")
    if schema.get("x-deserialize-default-on-null"):
        names.add("default_on_null")
    if schema.get("x-deserialize-skip-invalid-items"):
        names.add("skip_invalid_items")
    return names


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, with ints and floats told apart (and bools apart from both)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and str(a) == str(b)
    return bool(a == b)
