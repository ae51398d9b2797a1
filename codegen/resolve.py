"""Resolve stage: checks that a loaded document is an ACP schema whose `$ref`s all land.

Owns: the ACP shape check (`$defs` plus at least one `x-method`), `$ref` targets (dangling
references), reference cycles that no Python type can represent (a definition that is only an
alias of itself through `$ref`/`allOf` chains), and the `x-side` vocabulary. Produces a
`ResolvedSchema`: the document with its definitions and a lookup for local references.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from codegen.errors import CodegenError, Diagnostic, fail, pointer_join
from codegen.load import LoadedSchema

KNOWN_SIDES = ("agent", "client", "both", "protocol", "proxy")
DEFS_PREFIX = "#/$defs/"


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
    """Yield (pointer, object) for every JSON object in the document."""
    if isinstance(node, dict):
        yield pointer, node
        for key, value in node.items():
            yield from _walk(value, pointer_join(pointer, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, pointer_join(pointer, index))


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
        ref = obj.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
                problems.append(
                    Diagnostic("error", "bad-ref", f"unsupported $ref {ref!r} (only #/$defs/...)", label, pointer)
                )
            elif ref_name(ref) not in defs:
                problems.append(
                    Diagnostic("error", "dangling-ref", f"$ref {ref!r} points to no definition", label, pointer)
                )
        if "x-method" in obj:
            has_method = True
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
        problems.append(Diagnostic("error", "not-acp", "not an ACP schema: no `x-method` anywhere", label, ""))
    if not problems:
        problems.extend(_alias_cycles(defs, label))
    if problems:
        raise CodegenError(*problems)
    return ResolvedSchema(loaded=loaded, defs=defs)


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
