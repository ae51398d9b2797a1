"""Which protocol versions a scaffolded project speaks, and the bindings of each.

A project speaks ACP v1 and v2 unless `--protocol` picks one. Each version gets its own bindings
subpackage (`acp` for v2, `acp_v1` for v1), rendered from its own schema: `--schema` for the
newest version picked (default: the default pin for v2, the pinned `acp_v1` for v1),
`--v1-schema` for v1 next to v2. Each schema must have what the project's code uses in that
version (`incompatible-schema` otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from acp_codegen.errors import fail
from acp_codegen.ir.nodes import Protocol
from acp_codegen.pins import load_pins
from acp_codegen.pipeline import Target, render_target
from acp_codegen.render.dispatch import fanout_for
from acp_codegen.revisions import Resolver
from acp_codegen.sources import default_cache_dir

Kind = Literal["agent", "client"]

PROTOCOLS: tuple[int, ...] = (1, 2)
"""The protocol versions a project speaks unless `--protocol` picks one."""

BINDINGS: Mapping[int, str] = {2: "acp", 1: "acp_v1"}
"""The bindings subpackage of each protocol version."""

DEFAULT_TARGET: Mapping[int, str | None] = {2: None, 1: "acp_v1"}
"""The pinned target each version's bindings come from (None: the default pin)."""

# What each kind's code calls in v1: wire methods, and `session/update` variants.
REQUIRED_V1_METHODS = frozenset(
    {"initialize", "session/new", "session/prompt", "session/cancel", "session/update", "session/request_permission"}
)
REQUIRED_V1_UPDATES = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "plan", "tool_call", "tool_call_update"}
)

# What each kind's code calls in v2: wire methods, and `session/update` variants it sends or renders.
REQUIRED_METHODS: Mapping[Kind, frozenset[str]] = {
    "agent": frozenset(
        {
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel",
            "session/list",
            "session/close",
            "session/resume",
            "session/update",
            "session/request_permission",
        }
    ),
    "client": frozenset(
        {
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel",
            "session/update",
            "session/request_permission",
        }
    ),
}
REQUIRED_UPDATES: Mapping[Kind, frozenset[str]] = {
    "agent": frozenset(
        {
            "user_message",
            "agent_message",
            "agent_message_chunk",
            "agent_thought_chunk",
            "state_update",
            "plan_update",
            "tool_call_update",
            "tool_call_content_chunk",
        }
    ),
    "client": frozenset(
        {
            "user_message",
            "agent_message",
            "agent_message_chunk",
            "agent_thought",
            "agent_thought_chunk",
            "state_update",
            "plan_update",
            "tool_call_update",
            "tool_call_content_chunk",
            "notice",
        }
    ),
}


@dataclass(frozen=True)
class Bound:
    """One protocol version of a project: its bindings subpackage, schema and rendered files."""

    version: int
    subpackage: str
    target: Target
    sha256: str
    files: dict[str, str]


def schema_target(schema: str | None, package: str, pins_path: Path) -> Target:
    """The bindings target: `schema` (a source or pinned target name), else the default pin."""
    if schema is None:
        pin = load_pins(pins_path).default_pin
        return Target(pin.name, package, pin.source, pin.sha256)
    ref = Resolver(pins_path).resolve(schema)
    return Target(ref.label, package, ref.source, ref.sha256)


def check_protocol(protocol: Protocol, kind: Kind, label: str, version: int = 2) -> None:
    """`incompatible-schema` unless the schema has every method and update the project uses."""
    required = (REQUIRED_V1_METHODS, REQUIRED_V1_UPDATES) if version == 1 else (REQUIRED_METHODS[kind], REQUIRED_UPDATES[kind])
    methods = {m.wire_name: m for m in protocol.methods}
    missing = sorted(required[0] - set(methods))
    update = methods.get("session/update")
    fanout = fanout_for(protocol, update) if update is not None else None
    tags = {case.tag for case in fanout.cases} if fanout is not None else set()
    missing += [f"update {tag}" for tag in sorted(required[1] - tags)]
    if missing:
        hint = " (for v1 bindings: --protocol 1)" if version == 2 else ""
        raise fail(
            "incompatible-schema",
            f"the scaffolded {kind} follows the ACP v{version} prompt lifecycle, but this schema "
            f"lacks{hint}: " + ", ".join(missing),
            file=label,
        )


def bind_versions(
    kind: Kind, package: str, protocols: tuple[int, ...], schema: str | None, v1_schema: str | None, pins_path: Path
) -> tuple[Bound, ...]:
    """Render and check the bindings of each version, oldest first."""
    versions = tuple(sorted(set(protocols)))
    bad = [v for v in versions if v not in BINDINGS]
    if bad or not versions:
        raise fail("bad-protocol", f"protocol versions are 1 and 2, not {bad or 'none'}", file="--protocol")
    if kind == "client" and 2 not in versions:
        raise fail(
            "bad-protocol",
            "the client shows every version through the v2 session state, so it needs the v2 "
            "bindings; leave --protocol out (v1 and v2) or pass --protocol 2",
            file="--protocol",
        )
    if v1_schema is not None and versions != (1, 2):
        raise fail("bad-option", "--v1-schema is for a project speaking both versions; use --schema", file="--v1-schema")
    bound = []
    for version in versions:
        source = schema if version == versions[-1] else v1_schema
        subpackage = f"{package}.{BINDINGS[version]}"
        if source is None and DEFAULT_TARGET[version] is not None:
            source = DEFAULT_TARGET[version]
        target = schema_target(source, subpackage, pins_path)
        files, protocol = render_target(target, cache_dir=default_cache_dir())
        check_protocol(protocol, kind, target.source, version)
        bound.append(Bound(version, BINDINGS[version], target, target.sha256 or protocol.sha256, files))
    return tuple(bound)


def regenerate_command(package: str, bound: Bound, vendored: bool = False) -> str:
    """The command that regenerates one version's bindings in the project's directory (and the
    vendored runtime beside them)."""
    return (
        f"acp-codegen generate --schema '{bound.target.source}' --sha256 {bound.sha256} "
        f"--package {package}.{bound.subpackage} --out ." + (" --vendor-runtime" if vendored else "")
    )
