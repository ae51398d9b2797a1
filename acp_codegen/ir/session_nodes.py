"""Session spec nodes: what the session reducer template (`session.py`) is rendered from.

Frozen dataclasses built by `acp_codegen.ir.session` from the definitions: the entities of the
timeline with the fields their upserts patch and the spec rule each field follows (with the
comment the template quotes), the chunks that append to them, session-level records and
snapshots, plans, the state machine's variant, and the names the generated module imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Rule = Literal[
    "required",
    "replace",
    "collection",
    "reset",
    "meta_patch",
    "event_meta",
    "keep_on_null",
    "bytes",
]

# The rule each kind of field follows, quoted (or closely paraphrased) from the spec and schema.
RULE_COMMENTS: dict[Rule, str] = {
    "required": "required on every update: the value replaces the stored one",
    "replace": "omitted leaves it unchanged, null clears it, a value replaces it",
    "collection": (
        "omitted: unchanged; null or []: cleared; an array replaces all (chunks included)"
    ),
    "reset": "omitted leaves it unchanged, null resets it to `{reset}`, a value replaces it",
    "meta_patch": "_meta patches by top-level key (a null key is removed); null clears it",
    "event_meta": "_meta is scoped to this update: no patch semantics",
    "keep_on_null": "omitted or null participant IDs leave previously known identities intact",
    "bytes": "an authoritative replacement snapshot of the output bytes; null clears them",
}

# Names of the classes session.py defines; a schema definition of the same name would clash.
OWN_NAMES = (
    "SessionState",
    "ContextUsage",
    "SessionDetails",
    "TimelineMessage",
    "TimelineToolCall",
    "TimelineTerminal",
    "TimelinePlan",
    "TimelineCompaction",
    "TimelineSubagent",
    "TimelineSessionMessage",
    "TimelineRaw",
    "TimelineEntity",
    "parse_update",
)


@dataclass(frozen=True)
class PatchField:
    """One stored attribute of an entity and how an upsert changes it."""

    py_name: str
    rule: Rule
    annotation: str
    default: str
    reset: str | None = None  # for `reset`: the Python expression a null resets it to
    reset_wire: str = ""  # ... and that value on the wire
    data_attr: str | None = None  # for `bytes`: the snapshot object's base64 attribute

    @property
    def comment(self) -> str:
        """The rule this field follows, as a short comment."""
        return RULE_COMMENTS[self.rule].format(reset=self.reset_wire)


@dataclass(frozen=True)
class Upsert:
    """A variant that creates or patches one entity."""

    tag: str
    variant: str
    id_attr: str
    fields: tuple[PatchField, ...]

    @property
    def reads_fields_set(self) -> bool:
        """Whether a patch needs `model_fields_set` (to tell an omitted field from null)."""
        return any(f.rule not in ("required", "event_meta", "keep_on_null") for f in self.fields)


@dataclass(frozen=True)
class Chunk:
    """A variant that appends to one entity's collection."""

    tag: str
    variant: str
    id_attr: str
    content: str  # the chunk's payload attribute
    target: str  # the entity attribute it appends to
    role: str | None = None  # messages: the role (upsert tag) the chunk belongs to
    participants: tuple[tuple[str, str, bool], ...] = ()  # (attribute, wire name, declared)


@dataclass(frozen=True)
class EntitySpec:
    """An ID-addressed timeline entity: its class, stored fields, upserts and chunks."""

    kind: str
    class_name: str
    id_attr: str
    id_annotation: str
    fields: tuple[PatchField, ...]
    upserts: tuple[Upsert, ...]
    chunks: tuple[Chunk, ...]
    doc: str
    roles: bool = False  # messages: one class for several roles, keyed by (role, id)


@dataclass(frozen=True)
class RecordSpec:
    """A session-level record patched by one variant (usage, session info)."""

    class_name: str
    attr: str
    upsert: Upsert
    doc: str


@dataclass(frozen=True)
class PlanSpec:
    """Plan upserts (content keyed by the plan ID inside it) and removals."""

    update: str
    content_attr: str
    content_type: str
    id_attr: str  # on the content
    id_annotation: str
    meta_attr: str | None
    removed: str | None
    removed_id_attr: str | None


@dataclass(frozen=True)
class Snapshot:
    """A variant whose payload replaces one session-level value (commands, config options)."""

    tag: str
    variant: str
    attr: str
    annotation: str


@dataclass(frozen=True)
class SessionSpec:
    """Everything session.py is rendered from."""

    union: str
    tag_attr: str
    entities: tuple[EntitySpec, ...]
    records: tuple[RecordSpec, ...]
    snapshots: tuple[Snapshot, ...]
    plan: PlanSpec | None
    state_variant: str | None
    state_tag_attr: str | None
    known_states: tuple[str, ...]
    notice: str | None
    handlers: tuple[tuple[str, str], ...]  # (tag, SessionState method) of every modelled variant
    model_imports: tuple[str, ...]
    enum_imports: tuple[str, ...]
