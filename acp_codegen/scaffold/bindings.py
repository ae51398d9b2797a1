"""Which protocol versions a scaffolded project speaks, and the bindings of each.

A project speaks ACP v1 and v2 unless `--protocol` picks one. Each version gets its own bindings
subpackage (`acp` for v2, `acp_v1` for v1), rendered from its own schema: `--schema` for the
newest version picked (default: the default pin for v2, the pinned `acp_v1` for v1),
`--v1-schema` for v1 next to v2. Each schema must have what the project's code uses in that
version (`incompatible-schema` otherwise).

A client shows every version through the v2 session state (`acp.SessionState`: v1 updates are
translated into the v2 updates that mean the same, `v1.py`), so a client speaking only v1
(`--protocol 1`) still gets the v2 bindings, from the default pin, as its display model: they
are never spoken on the wire (`Bound.spoken` is False). One display, one reducer, one set of
display tests for both versions, rather than a second, v1-only reducer that v1's chunk-only
messages and tool-call rules would need and the spec does not define.

A proxy speaks v2 only (`PROXY_PROTOCOLS`): `proxy/initialize` and `proxy/successor` exist in the
v2 draft alone; a v1 client or agent around it is the conductor's business (its version router).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from acp_codegen.errors import fail
from acp_codegen.ir.dispatch import fanout_for
from acp_codegen.ir.nodes import Protocol
from acp_codegen.pins import load_pins
from acp_codegen.pipeline import Target, render_target
from acp_codegen.revisions import Resolver

Kind = Literal["agent", "client", "proxy"]

PROTOCOLS: tuple[int, ...] = (1, 2)
"""The protocol versions a project speaks unless `--protocol` picks one."""

PROXY_PROTOCOLS: tuple[int, ...] = (2,)
"""The protocol versions a proxy project speaks (the proxy methods are v2's)."""

BINDINGS: Mapping[int, str] = {2: "acp", 1: "acp_v1"}
"""The bindings subpackage of each protocol version."""

DEFAULT_TARGET: Mapping[int, str | None] = {2: None, 1: "acp_v1"}
"""The pinned target each version's bindings come from (None: the default pin)."""

# What each kind's code calls in v1: wire methods, and `session/update` variants.
REQUIRED_V1_METHODS = frozenset(
    {
        "initialize",
        "session/new",
        "session/prompt",
        "session/cancel",
        "session/update",
        "session/request_permission",
    }
)
REQUIRED_V1_UPDATES = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "plan", "tool_call", "tool_call_update"}
)

# What each kind's code calls in v2: wire methods, and `session/update` variants it sends or
# renders.
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
    # a proxy rewrites prompts and is run by a conductor (the proxy-chains RFD of the draft)
    "proxy": frozenset({"initialize", "session/prompt", "proxy/initialize", "proxy/successor"}),
}
REQUIRED_UPDATES: Mapping[Kind, frozenset[str]] = {
    "proxy": frozenset(),
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
    spoken: bool = True
    """False for bindings the project uses but does not speak (a v1-only client's display model)."""


def schema_target(schema: str | None, package: str, pins_path: Path) -> Target:
    """The bindings target: `schema` (a source or pinned target name), else the default pin."""
    if schema is None:
        pin = load_pins(pins_path).default_pin
        return Target(pin.name, package, pin.source, pin.sha256)
    ref = Resolver(pins_path).resolve(schema)
    return Target(ref.label, package, ref.source, ref.sha256)


def check_protocol(protocol: Protocol, kind: Kind, label: str, version: int = 2) -> None:
    """`incompatible-schema` unless the schema has every method and update the project uses."""
    required = (
        (REQUIRED_V1_METHODS, REQUIRED_V1_UPDATES)
        if version == 1
        else (REQUIRED_METHODS[kind], REQUIRED_UPDATES[kind])
    )
    methods = {m.wire_name: m for m in protocol.methods}
    missing = sorted(required[0] - set(methods))
    update = methods.get("session/update")
    fanout = fanout_for(protocol, update) if update is not None else None
    tags = {case.tag for case in fanout.cases} if fanout is not None else set()
    missing += [f"update {tag}" for tag in sorted(required[1] - tags)]
    if missing:
        hint = " (for v1 bindings: --protocol 1)" if version == 2 and kind != "proxy" else ""
        raise fail(
            "incompatible-schema",
            f"the scaffolded {kind} follows the ACP v{version} prompt lifecycle, but this schema "
            f"lacks{hint}: " + ", ".join(missing),
            file=label,
        )


def default_protocols(kind: Kind) -> tuple[int, ...]:
    """The protocol versions a project of `kind` speaks unless told otherwise."""
    return PROXY_PROTOCOLS if kind == "proxy" else PROTOCOLS


def bind_versions(
    kind: Kind,
    package: str,
    protocols: tuple[int, ...],
    schema: str | None,
    v1_schema: str | None,
    pins_path: Path,
) -> tuple[Bound, ...]:
    """Render and check the bindings of each version, oldest first. Their headers name the
    project's pin file's command (`acp-codegen generate <subpackage>`: the pin file says where
    they go and whether the runtime is vendored)."""
    versions = tuple(sorted(set(protocols)))
    bad = [v for v in versions if v not in BINDINGS]
    if bad or not versions:
        raise fail(
            "bad-protocol", f"protocol versions are 1 and 2, not {bad or 'none'}", file="--protocol"
        )
    if kind == "proxy" and versions != PROXY_PROTOCOLS:
        raise fail(
            "bad-protocol",
            "a proxy speaks ACP v2 only (proxy/initialize and proxy/successor are v2's)",
            file="--protocol",
        )
    if v1_schema is not None and versions != (1, 2):
        raise fail(
            "bad-option",
            "--v1-schema is for a project speaking both versions; use --schema",
            file="--v1-schema",
        )
    bound = []
    for version in versions:
        source = schema if version == versions[-1] else v1_schema
        subpackage = f"{package}.{BINDINGS[version]}"
        if source is None and DEFAULT_TARGET[version] is not None:
            source = DEFAULT_TARGET[version]
        target = schema_target(source, subpackage, pins_path)
        target = replace(
            target, name=BINDINGS[version], command=f"acp-codegen generate {BINDINGS[version]}"
        )
        files, protocol = render_target(target)
        check_protocol(protocol, kind, target.source, version)
        bound.append(
            Bound(version, BINDINGS[version], target, target.sha256 or protocol.sha256, files)
        )
    if kind == "client" and 2 not in versions:  # the display model (see the module docstring)
        target = schema_target(DEFAULT_TARGET[2], f"{package}.{BINDINGS[2]}", pins_path)
        target = replace(target, name=BINDINGS[2], command=f"acp-codegen generate {BINDINGS[2]}")
        files, protocol = render_target(target)
        check_protocol(protocol, kind, target.source, 2)
        bound.append(
            Bound(2, BINDINGS[2], target, target.sha256 or protocol.sha256, files, spoken=False)
        )
    return tuple(bound)


def regenerate_command(bound: Bound) -> str:
    """The command that regenerates one version's bindings in the project's directory (and the
    vendored runtime beside them, when the pin file says so), as their headers name it."""
    return bound.target.regenerate
