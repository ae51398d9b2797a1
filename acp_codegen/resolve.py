"""Resolve stage: checks that a loaded document is an ACP schema whose `$ref`s all land.

Owns: the ACP shape check (`$defs` plus at least one `x-method`), `$ref` targets (dangling
references), reference cycles that no Python type can represent (a definition that is only an
alias of itself through `$ref`/`allOf` chains; after the IR is built, `check_type_cycles` also
catches type aliases that mention each other through unions or containers), the `x-method` and
`x-side` vocabulary, and the combinators (`allOf`/`anyOf`/`oneOf` must be non-empty arrays).
Only schema positions are inspected: property names and data (`const`, `enum`, `default`,
`examples`) are never mistaken for keywords. Produces a `ResolvedSchema`: the document with its
definitions and a lookup for local references.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_codegen.errors import CodegenError, Diagnostic, fail, pointer_join
from acp_codegen.load import LoadedSchema

if TYPE_CHECKING:
    from acp_codegen.ir.nodes import Protocol

KNOWN_SIDES = ("agent", "client", "both", "protocol", "proxy")
DEFS_PREFIX = "#/$defs/"
# Keywords whose value maps names (not keywords) to schemas.
_NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is instance data, never a schema.
_DATA = frozenset({"const", "enum", "default", "examples", "required", "x-method", "x-side"})
_COMBINATORS = ("allOf", "anyOf", "oneOf")


@dataclass(frozen=True)
class ResolvedSchema:
    """A loaded ACP document whose references are known to resolve."""

    loaded: LoadedSchema
    defs: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The file name used in diagnostics."""
        return self.loaded.label

    def deref(self, ref: str) -> tuple[str, Any]:
        """Return (definition name, schema) for a local `#/$defs/Name` reference."""
        name = ref_name(ref)
        return name, self.defs[name]


def ref_name(ref: str) -> str:
    """The definition name a `#/$defs/Name` reference points to."""
    return ref[len(DEFS_PREFIX) :].replace("~1", "/").replace("~0", "~")


def _walk(node: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (pointer, object) for every schema object in the document (not data, not names),
    in document order; iterative, so depth is no limit."""
    stack: list[tuple[Any, str]] = [(node, pointer)]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, list):
            stack.extend(
                reversed([(value, pointer_join(pointer, i)) for i, value in enumerate(node)])
            )
            continue
        if not isinstance(node, dict):
            continue
        yield pointer, node
        children: list[tuple[Any, str]] = []
        for key, value in node.items():
            if key in _DATA:
                continue
            if key in _NAMED_SCHEMAS and isinstance(value, dict):
                children.extend(
                    (sub, pointer_join(pointer, key, name)) for name, sub in value.items()
                )
            else:
                children.append((value, pointer_join(pointer, key)))
        stack.extend(reversed(children))


def _alias_target(schema: Any) -> str | None:
    """The definition a schema merely renames (`$ref` or a one-element `allOf`), if any."""
    if not isinstance(schema, dict):
        return None
    keys = set(schema) - {"description", "title", "x-docs-ignore"}
    if keys == {"$ref"} and isinstance(schema["$ref"], str):
        return schema["$ref"]
    if keys == {"allOf"} and isinstance(schema["allOf"], list) and len(schema["allOf"]) == 1:
        return _alias_target(schema["allOf"][0])
    return None


def resolve(loaded: LoadedSchema) -> ResolvedSchema:
    """Check the document and return it resolved; raise CodegenError listing every problem."""
    doc = loaded.document
    label = loaded.label
    defs = doc.get("$defs")
    if not isinstance(defs, dict) or not defs:
        raise fail("not-acp", "not an ACP schema: no `$defs` object", file=label, pointer="")
    problems: list[Diagnostic] = []
    has_method = False
    for pointer, obj in _walk(doc, ""):
        problems.extend(_not_schemas(obj, pointer, label))
        ref = obj.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
                problems.append(
                    Diagnostic(
                        "error",
                        "bad-ref",
                        f"unsupported $ref {ref!r} (only #/$defs/...)",
                        label,
                        pointer,
                    )
                )
            elif ref_name(ref) not in defs:
                problems.append(
                    Diagnostic(
                        "error",
                        "dangling-ref",
                        f"$ref {ref!r} points to no definition",
                        label,
                        pointer,
                    )
                )
        if "x-method" in obj:
            has_method = True
            method = obj["x-method"]
            if not isinstance(method, str) or not method:
                problems.append(
                    Diagnostic(
                        "error",
                        "bad-method",
                        f"x-method must be a non-empty string, got {method!r}",
                        label,
                        pointer_join(pointer, "x-method"),
                    )
                )
        for key in _COMBINATORS:
            if key in obj and (not isinstance(obj[key], list) or not obj[key]):
                problems.append(
                    Diagnostic(
                        "error",
                        "bad-schema",
                        f"{key} must be a non-empty array of schemas, got {obj[key]!r}",
                        label,
                        pointer_join(pointer, key),
                    )
                )
        side = obj.get("x-side")
        if side is not None and side not in KNOWN_SIDES:
            problems.append(
                Diagnostic(
                    "error",
                    "unknown-side",
                    f"x-side {side!r} is not one of {', '.join(KNOWN_SIDES)}",
                    label,
                    pointer_join(pointer, "x-side"),
                )
            )
    if not has_method:
        problems.append(
            Diagnostic("error", "not-acp", "not an ACP schema: no `x-method` anywhere", label, "")
        )
    if not problems:
        problems.extend(_alias_cycles(defs, label))
    if problems:
        raise CodegenError(*problems)
    return ResolvedSchema(loaded=loaded, defs=defs)


def _not_schemas(obj: dict[str, Any], pointer: str, label: str) -> Iterator[Diagnostic]:
    """Entries of `$defs`, `properties` and the like that are not schemas (objects or booleans)."""
    for key in _NAMED_SCHEMAS:
        named = obj.get(key)
        if not isinstance(named, dict):
            continue
        for name, sub in named.items():
            if not isinstance(sub, (dict, bool)):
                yield Diagnostic(
                    "error",
                    "bad-schema",
                    (
                        f"{key} entry {name!r} must be a schema (an object or a boolean), got "
                        f"{_json_kind(sub)}"
                    ),
                    label,
                    pointer_join(pointer, key, name),
                )


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {value!r}"
    return "an array" if isinstance(value, list) else f"the number {value!r}"


def _alias_cycles(defs: Mapping[str, Any], label: str) -> list[Diagnostic]:
    """Report definitions that alias themselves through a chain of plain references."""
    found: list[Diagnostic] = []
    reported: set[str] = set()
    for start in defs:
        chain = [start]
        current = start
        while (target := _alias_target(defs[current])) is not None:
            current = ref_name(target)
            if current in chain:
                cycle = chain[chain.index(current) :]
                if not reported.intersection(cycle):
                    reported.update(cycle)
                    path = " -> ".join([*cycle, current])
                    found.append(
                        Diagnostic(
                            "error",
                            "ref-cycle",
                            f"$ref cycle {path} has no type to stand for",
                            label,
                            pointer_join("/$defs", current),
                        )
                    )
                break
            chain.append(current)
    return found


def check_type_cycles(protocol: Protocol, label: str) -> None:
    """Raise `ref-cycle` for type aliases that need each other to be defined first.

    Aliases and tagged unions are evaluated when the generated module is imported, so an alias
    that mentions itself (directly, or through other aliases, unions or containers such as
    `list[...]`) has no Python type to stand for. Classes break such cycles; aliases cannot.
    """
    from acp_codegen.ir.nodes import Alias, TaggedUnion
    from acp_codegen.ir.order import type_refs

    eager: dict[str, set[str]] = {}
    for d in protocol.definitions:
        if isinstance(d, Alias):
            eager[d.name] = set(type_refs(d.type))
        elif isinstance(d, TaggedUnion):
            eager[d.name] = {v.target for v in d.variants} | ({d.unknown} if d.unknown else set())
    pointers = {d.name: d.pointer for d in protocol.definitions}
    found: list[Diagnostic] = []
    reported: set[str] = set()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in sorted(eager):  # depth-first, iterative: alias chains of any length
        if root in state:
            continue
        state[root] = 1
        path: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(eager[root])))]
        names = [root]
        while path:
            name, deps = path[-1]
            for dep in deps:
                if dep not in eager:
                    continue
                if state.get(dep) == 1:
                    cycle = names[names.index(dep) :]
                    if not reported.intersection(cycle):
                        reported.update(cycle)
                        chain = " -> ".join([*cycle, dep])
                        found.append(
                            Diagnostic(
                                "error",
                                "ref-cycle",
                                (
                                    f"type alias cycle {chain} has no type to stand for (no class "
                                    "breaks it)"
                                ),
                                label,
                                pointers.get(dep),
                            )
                        )
                elif dep not in state:
                    state[dep] = 1
                    path.append((dep, iter(sorted(eager[dep]))))
                    names.append(dep)
                    break
            else:
                path.pop()
                names.pop()
                state[name] = 2
    if found:
        raise CodegenError(*found)
