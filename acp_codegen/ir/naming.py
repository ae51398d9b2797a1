"""Naming rules: how wire names become Python identifiers (fields, classes, constants, handlers).

All spellings are pure functions of the wire text, so the same schema name always gives the same
Python name whatever else changes in a revision.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")

# Attributes of pydantic.BaseModel (and our own helpers) a field must not shadow.
_RESERVED_FIELDS = frozenset(
    {
        "copy",
        "dict",
        "json",
        "schema",
        "schema_json",
        "construct",
        "validate",
        "fields",
        "from_orm",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "update_forward_refs",
        "to_json",
        "from_json",
        "to_dict",
        "from_dict",
    }
)


def words(text: str) -> list[str]:
    """Split a wire name (camelCase, snake_case, kebab, paths) into lower-case words."""
    out: list[str] = []
    for chunk in _NON_WORD.split(text):
        if chunk:
            out.extend(w.lower() for w in _CAMEL_BOUNDARY.split(chunk) if w)
    return out


def snake(text: str) -> str:
    """`sessionId` -> `session_id`, `session/request_permission` -> `session_request_permission`."""
    name = "_".join(words(text)) or "value"
    if name[0].isdigit():
        name = "v_" + name
    return name


def field_name(wire: str) -> str:
    """Python attribute for a wire property; avoids keywords and BaseModel attributes."""
    name = snake(wire)
    if keyword.iskeyword(name) or name in _RESERVED_FIELDS or name.startswith("model_"):
        name += "_"
    return name


def distinct_field_names(
    wires: Sequence[str],
    taken: AbstractSet[str] = frozenset(),
    keep: AbstractSet[str] = frozenset(),
) -> dict[str, str]:
    """Python names for the properties of one object, all distinct: `field_name(wire)`, and where
    several wire names give the same name (`fooBar`, `foo_bar`, `foo-bar`, `FooBar`), a wire name
    in `keep` (a tag), else the one spelled exactly so, keeps it and the others, in code-point
    order of their wire names, get `_2`, `_3`, ... Names in `taken` (inherited fields) and the
    plain names of other properties are never given out, so the result does not depend on the
    order of the properties."""
    plain = {wire: field_name(wire) for wire in wires}
    groups: dict[str, list[str]] = {}
    for wire in wires:
        groups.setdefault(plain[wire], []).append(wire)
    used = set(taken)
    out: dict[str, str] = {}
    for name, group in sorted(groups.items()):
        ranked = sorted(group, key=lambda wire: (wire not in keep, wire != name, wire))
        number = 1
        for index, wire in enumerate(ranked):
            candidate = name
            while (
                candidate in used
                or (candidate != name and candidate in groups)
                or (index and candidate == name)
            ):
                number += 1
                candidate = f"{name}{'' if name.endswith('_') else '_'}{number}"
            used.add(candidate)
            out[wire] = candidate
    return out


def pascal(text: str) -> str:
    """`end_turn` -> `EndTurn`, `resource_link` -> `ResourceLink`, `date-time` -> `DateTime`."""
    name = "".join(w[:1].upper() + w[1:] for w in words(text)) or "Value"
    if name[0].isdigit():
        name = "V" + name
    return name


def constant(text: str) -> str:
    """`in_progress` -> `IN_PROGRESS`, `date-time` -> `DATE_TIME`."""
    name = "_".join(w.upper() for w in words(text)) or "VALUE"
    if name[0].isdigit():
        name = "V_" + name
    return name


def handler_name(wire_method: str) -> str:
    """Handler method for a wire method: `session/prompt` -> `session_prompt`."""
    return snake(wire_method)


# Names a generated package already uses where definitions live (imported into models.py or
# enums.py, by our head template or by datamodel-code-generator, or exported from the package
# root by the runtime, dispatch and session modules). A definition never takes one of them: it
# would shadow the import (a field typed `Field` would silently mean pydantic's) or the export.
# tests/test_render_models.py checks this list against the generated modules.
RESERVED_CLASS_NAMES = frozenset(
    {
        "AGENT_METHODS", "AGENT_NOTIFICATIONS", "AGENT_REQUESTS", "CLIENT_METHODS",
        "CLIENT_NOTIFICATIONS", "CLIENT_REQUESTS", "PROTOCOL_METHODS", "PROTOCOL_NOTIFICATIONS",
        "PROTOCOL_REQUESTS", "PROXY_METHODS", "PROXY_NOTIFICATIONS", "PROXY_REQUESTS",
        "TimelineEntity", "Negotiated", "Routed", "UnsupportedVersionError", "VersionRouter",
        "AgentHandler", "AgentPeerBase", "BINDING", "Binding", "ClientHandler", "PeerBase",
        "SpawnOptions", "Unpack", "AbstractAsyncContextManager", "Sequence", "TaggedBy", "AcpModel",
        "Agent", "AgentPeer", "Annotated", "Any", "Apart", "BaseModel", "ClassVar", "Client",
        "Items", "ClientPeer", "Connection", "ContextUsage", "Discriminator", "Field", "Integer",
        "JsonInt", "Literal", "MethodSpec", "ModelWrapValidatorHandler", "NONE_TAG",
        "NOT_KNOWN_TAG", "NOT_NULL", "ONE_OF", "OpenEnum", "RpcError", "SHA256", "SOURCE",
        "STRICT_FIRST", "Self", "SessionDetails", "SessionHandle", "SessionState", "StderrTail",
        "StrictBool", "StrictFloat", "StrictInt", "StrictStr", "TYPE_CHECKING", "Tag", "TagValue",
        "TaggedModel", "TimelineCompaction", "TimelineMessage", "TimelinePlan", "TimelineRaw",
        "TimelineSessionMessage", "TimelineSubagent", "TimelineTerminal", "TimelineToolCall",
        "TypeAlias", "TypeAliasType", "UNKNOWN_TAG", "Proxy",
    }
)  # fmt: skip


# Capitalised names Python itself gives meaning to: `None`, `True`, `False` cannot be class names
# at all, and a class named `Exception` or `NotImplemented` would shadow the builtin in every
# generated module that imports the models.
PYTHON_CLASS_NAMES = frozenset(
    name for name in {*keyword.kwlist, *keyword.softkwlist, *dir(builtins)} if name[:1].isupper()
)


def class_name(def_key: str) -> str:
    """Python class name for a `$defs` key (kept as is when already an identifier and free)."""
    if def_key.isidentifier() and not keyword.iskeyword(def_key) and def_key[:1].isupper():
        name = def_key
    else:
        name = pascal(def_key)
    return name + "_" if name in RESERVED_CLASS_NAMES or name in PYTHON_CLASS_NAMES else name
