"""One schema revision as the checker uses it: the raw `$defs`, the IR, and strict validators.

Which definition a message's params or result must match comes from the IR's method table
(`Method.params` / `Method.result`, by sending direction); validation is Draft 2020-12
`jsonschema` over the schema's own definitions. That is the strict sense a conforming sender must
meet: the `x-deserialize-*` leniency hints are annotations `jsonschema` does not apply, and
formats are not asserted (the schema says they are hints). Failures inside a union are narrowed
to the branch the message meant (its tag matched, its JSON type fitted), so a finding points at
the missing `toolCallId`, not at "not valid under any of the given schemas".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from acp_codegen.ir.nodes import Method, Protocol, TaggedUnion
from acp_codegen.pins import default_pin_path, load_pins
from acp_codegen.pipeline import build_ir, load
from acp_codegen.progress import step as progress_step
from acp_codegen.revisions import Resolver

Direction = tuple[str, str]  # (sender, wire method)


@dataclass(frozen=True)
class Problem:
    """One schema failure: JSON pointer in the checked value, what is wrong, the schema rule
    broken."""

    pointer: str
    message: str
    rule: str


def pointer(path: Iterator[Any] | Any) -> str:
    """RFC 6901 pointer of a jsonschema path."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


@dataclass
class Revision:
    """A loaded schema revision: label, raw `$defs`, IR and (lazily built) validators."""

    label: str
    defs: dict[str, Any]
    protocol: Protocol
    stable: Revision | None = None
    """For an unstable revision pinned beside its stable one: the stable revision, whose extra
    findings are marked stable-only rather than reported as failures."""
    _validators: dict[str, Draft202012Validator] = field(default_factory=dict)

    @property
    def version(self) -> int:
        """The protocol major version the revision describes (v1 spells `clientCapabilities`)."""
        init = self.defs.get("InitializeRequest", {}).get("properties", {})
        return 1 if "clientCapabilities" in init else 2

    @property
    def has_prompt_lifecycle(self) -> bool:
        """Whether the revision has the v2 prompt lifecycle (`state_update`, message IDs)."""
        union = self.protocol.by_def_name("SessionUpdate")
        return isinstance(union, TaggedUnion) and "state_update" in union.known_tags

    def method(self, sender: str, wire: str, kind: str) -> Method | None:
        """The method `sender` may send under `wire` as a request or notification, if the schema has
        it."""
        receiver = "agent" if sender == "client" else "client"
        for m in self.protocol.methods:
            if m.wire_name != wire or m.kind != kind:
                continue
            # proxy/*: the conductor (client side) initializes; proxy/successor goes both ways
            proxy = m.side == "proxy" and (sender == "client" or wire == "proxy/successor")
            if m.side in (receiver, "protocol") or proxy:
                return m
        return None

    def def_name(self, python_name: str | None) -> str | None:
        """The `$defs` key behind an IR definition name."""
        definition = self.protocol.get(python_name) if python_name else None
        return definition.def_name if definition is not None else None

    def validate(self, def_name: str, value: Any) -> list[Problem]:
        """Every strict failure of `value` against `$defs[def_name]`, narrowed into unions."""
        validator = self._validators.get(def_name)
        if validator is None:
            validator = Draft202012Validator({"$defs": self.defs, "$ref": f"#/$defs/{def_name}"})
            self._validators[def_name] = validator
        try:
            errors = list(validator.iter_errors(value))
        except RecursionError:
            return [Problem("", "nested too deeply to validate", f"#/$defs/{def_name}")]
        return [_problem(leaf, self.defs, def_name) for error in errors for leaf in _narrow(error)]


def _problem(error: ValidationError, defs: dict[str, Any], root: str) -> Problem:
    return Problem(
        pointer(error.absolute_path),
        f"{error.validator}: {_brief(error.message)}",
        _rule(defs, root, list(error.absolute_schema_path)),
    )


def _rule(defs: dict[str, Any], root: str, path: list[Any]) -> str:
    """`#/$defs/Name/...`: the failing keyword, from the innermost definition the path entered
    (jsonschema leaves `$ref` steps out of its paths, so they are followed where a step needs it).
    """
    base, node = f"#/$defs/{root}", defs.get(root, {})
    rel: list[Any] = []
    for step in path:
        if step == "$ref":
            continue
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and step not in node:
            base, rel = node["$ref"], []
            node = defs.get(base.rsplit("/", 1)[-1], {})
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            node = {}
        rel.append(step)
    return base + pointer(rel)


def _brief(message: str) -> str:
    return message if len(message) <= 160 else message[:157] + "..."


def _narrow(error: ValidationError) -> list[ValidationError]:
    """The errors inside the union branch the value meant, or the union error when that is
    unclear."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [error]
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    depth = len(error.absolute_path)
    meant = {i: errs for i, errs in branches.items() if not any(_mismatch(e, depth) for e in errs)}
    if len(meant) != 1:
        return [error]
    (errors,) = meant.values()
    return [leaf for sub in errors for leaf in _narrow(sub)]


def _mismatch(error: ValidationError, depth: int) -> bool:
    """Whether an error shows the value was never meant for its branch: a wrong JSON type of the
    value itself, or a wrong tag (a `const` or `enum` on a property of the value)."""
    here = len(error.absolute_path)
    if error.validator in ("type", "not") and here == depth:
        return True
    if error.validator in ("const", "enum") and here in (depth, depth + 1):
        return True
    if error.validator in ("anyOf", "oneOf") and here == depth and error.context:
        return all(_mismatch(e, depth) for e in error.context)
    return False


def resolve_revision(schema: str | None, pins_path: Path | None = None) -> Revision:
    """Load the revision `schema` names (see `acp_codegen.revisions`), else the default pin."""
    pins_path = pins_path or default_pin_path()
    if schema is None:
        pin = load_pins(pins_path).default_pin
        return _load_revision(pin.name, pin.source, pin.sha256)
    ref = Resolver(pins_path).resolve(schema)
    return _load_revision(ref.label, ref.source, ref.sha256)


def _load_revision(label: str, source: str, sha256: str | None) -> Revision:
    with progress_step(f"loading {label}"):
        loaded = load(source, sha256)
        return Revision(label, loaded.document.get("$defs", {}), build_ir(loaded))


def pinned_for_version(version: int, pins_path: Path | None = None) -> Revision | None:
    """The first pinned revision describing protocol `version` (for a negotiated older version):
    its pinned unstable schema when it has one (with the stable revision beside it), else itself."""
    pins = load_pins(pins_path or default_pin_path())
    for pin in pins.targets:  # the pins themselves: never re-read their names as arguments
        revision = _load_revision(pin.name, pin.source, pin.sha256)
        if revision.version != version:
            continue
        if pin.unstable is None:
            return revision
        loaded = load(pin.unstable.source, pin.unstable.sha256)
        return Revision(
            f"{pin.name} (unstable)",
            loaded.document.get("$defs", {}),
            build_ir(loaded),
            stable=revision,
        )
    return None
