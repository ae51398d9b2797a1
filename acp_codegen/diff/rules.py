"""The diff rules as data: one `Rule` per kind of change, with its ID, category, level and role.

A rule's `role` says whose implementation the change breaks, relative to the definition it is
found in (see docs/diff.md): `sender` (the sides that send the definition must change: old
senders no longer satisfy new receivers), `receiver` (the sides that receive it must change:
new senders send what old receivers reject), `both`, `caller` (for methods: the side that
calls a method, i.e. not the `x-side` handler) or `none`. Rules never change level at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["breaking", "warning", "info"]
Role = Literal["sender", "receiver", "both", "caller", "none"]
Category = Literal[
    "method", "definition", "field", "union", "enum", "stability", "generated", "docs"
]

LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")
CATEGORIES: tuple[Category, ...] = (
    "method",
    "definition",
    "field",
    "union",
    "enum",
    "stability",
    "generated",
    "docs",
)


@dataclass(frozen=True)
class Rule:
    """One kind of change: stable ID, category, level, who it breaks, and why."""

    id: str
    category: Category
    level: Level
    role: Role
    purpose: str


def _r(id: str, category: Category, level: Level, role: Role, purpose: str) -> Rule:
    return Rule(id, category, level, role, purpose)


RULES: tuple[Rule, ...] = (
    # methods (x-side names the handler; the caller is the other side)
    _r(
        "METHOD_ADDED",
        "method",
        "info",
        "none",
        (
            "A new method; callers must not rely on it with old peers (unknown methods get -32601 "
            "/ are ignored)."
        ),
    ),
    _r(
        "METHOD_REMOVED",
        "method",
        "breaking",
        "caller",
        "A method is gone; old callers get method-not-found from new handlers.",
    ),
    _r(
        "METHOD_RENAMED",
        "method",
        "breaking",
        "both",
        (
            "A method got a new wire name with the same params and result; old callers reach "
            "handlers that lack the new name (and the other way round)."
        ),
    ),
    _r(
        "METHOD_SIDE_CHANGED",
        "method",
        "breaking",
        "both",
        "The side that handles a method (x-side) changed.",
    ),
    _r(
        "METHOD_KIND_CHANGED",
        "method",
        "breaking",
        "both",
        "A method switched between request and notification.",
    ),
    _r(
        "METHOD_PARAMS_CHANGED",
        "method",
        "breaking",
        "both",
        "A method's params are now a different definition.",
    ),
    _r(
        "METHOD_RESULT_CHANGED",
        "method",
        "breaking",
        "both",
        "A request's result is now a different definition.",
    ),
    # definitions
    _r("DEFINITION_ADDED", "definition", "info", "none", "A new named definition ($defs entry)."),
    _r(
        "DEFINITION_REMOVED",
        "definition",
        "info",
        "none",
        "A named definition is gone (its uses are reported by their own rules).",
    ),
    _r(
        "DEFINITION_RENAMED",
        "definition",
        "info",
        "none",
        (
            "A $defs entry got a new name in the same place (keys are not on the wire); compared "
            "as one."
        ),
    ),
    _r(
        "DEFINITION_KIND_CHANGED",
        "definition",
        "breaking",
        "both",
        "A definition changed kind (object, tagged union, enum, alias).",
    ),
    _r(
        "STRUCT_CLOSED",
        "definition",
        "breaking",
        "sender",
        "An object no longer accepts unknown properties (additionalProperties: false).",
    ),
    _r("STRUCT_OPENED", "definition", "info", "none", "An object now accepts unknown properties."),
    _r(
        "TYPE_WIDENED",
        "definition",
        "breaking",
        "receiver",
        "A type accepts more values: new senders may send what old receivers reject.",
    ),
    _r(
        "TYPE_NARROWED",
        "definition",
        "breaking",
        "sender",
        "A type accepts fewer values: old senders may send what new receivers reject.",
    ),
    _r(
        "TYPE_CHANGED",
        "definition",
        "breaking",
        "both",
        "A type changed incompatibly in both directions.",
    ),
    # fields
    _r(
        "FIELD_ADDED",
        "field",
        "info",
        "none",
        "A new optional field; old receivers ignore it, old senders omit it.",
    ),
    _r(
        "REQUIRED_FIELD_ADDED",
        "field",
        "breaking",
        "sender",
        "A new required field; old senders do not send it.",
    ),
    _r(
        "FIELD_ADDED_TO_CLOSED_STRUCT",
        "field",
        "breaking",
        "receiver",
        (
            "A new optional field in an object that forbids unknown properties; old receivers "
            "reject it."
        ),
    ),
    _r(
        "FIELD_REMOVED",
        "field",
        "warning",
        "sender",
        "An optional field is gone; what old senders put there is ignored by new receivers.",
    ),
    _r(
        "REQUIRED_FIELD_REMOVED",
        "field",
        "breaking",
        "receiver",
        "A required field is gone; new senders omit what old receivers require.",
    ),
    _r(
        "FIELD_RENAMED",
        "field",
        "breaking",
        "both",
        "A field's wire name changed (same Python name, or same position and type).",
    ),
    _r(
        "FIELD_BECAME_REQUIRED",
        "field",
        "breaking",
        "sender",
        "An optional field became required; senders must now send it.",
    ),
    _r(
        "FIELD_BECAME_OPTIONAL",
        "field",
        "breaking",
        "receiver",
        "A required field became optional; receivers must cope with its absence.",
    ),
    _r(
        "FIELD_BECAME_NULLABLE",
        "field",
        "breaking",
        "receiver",
        "A field now accepts null; old receivers reject null.",
    ),
    _r(
        "FIELD_BECAME_NON_NULLABLE",
        "field",
        "breaking",
        "sender",
        "A field no longer accepts null; old senders may send it.",
    ),
    _r(
        "CONSTRAINT_TIGHTENED",
        "field",
        "breaking",
        "sender",
        "A constraint (minLength, maximum, minItems, ...) was added or tightened.",
    ),
    _r(
        "CONSTRAINT_RELAXED",
        "field",
        "breaking",
        "receiver",
        "A constraint was removed or relaxed; old receivers still enforce it.",
    ),
    _r(
        "CONSTRAINT_CHANGED",
        "field",
        "breaking",
        "both",
        "A constraint changed in no comparable way (e.g. a new pattern).",
    ),
    _r(
        "FORMAT_CHANGED",
        "field",
        "warning",
        "both",
        "A string or number format (date-time, uri, int64, ...) was added, removed or changed.",
    ),
    _r(
        "DEFAULT_CHANGED",
        "field",
        "warning",
        "sender",
        (
            "A field's default was added, removed or changed; senders that omit it mean something "
            "else."
        ),
    ),
    _r(
        "LENIENCE_ADDED",
        "field",
        "info",
        "none",
        "A leniency hint (x-deserialize-*) was added; receivers got more forgiving.",
    ),
    _r(
        "LENIENCE_REMOVED",
        "field",
        "warning",
        "sender",
        "A leniency hint was removed; malformed values old receivers forgave are now rejected.",
    ),
    # tagged unions
    _r(
        "VARIANT_ADDED",
        "union",
        "info",
        "none",
        "A new variant in an open union; old receivers keep it as the unknown variant.",
    ),
    _r(
        "VARIANT_ADDED_TO_CLOSED_UNION",
        "union",
        "breaking",
        "receiver",
        "A new variant in a closed union; old receivers reject it.",
    ),
    _r(
        "VARIANT_REMOVED",
        "union",
        "warning",
        "sender",
        (
            "A variant is gone from an open union; what old senders send now falls to the "
            "fallback (a semantic break)."
        ),
    ),
    _r(
        "VARIANT_REMOVED_FROM_CLOSED_UNION",
        "union",
        "breaking",
        "sender",
        "A variant is gone from a closed union; new receivers reject it.",
    ),
    _r(
        "UNION_OPENED",
        "union",
        "breaking",
        "receiver",
        (
            "A union gained a fallback for unknown tags; new senders may send tags old receivers "
            "reject."
        ),
    ),
    _r(
        "UNION_CLOSED",
        "union",
        "breaking",
        "sender",
        "A union lost its fallback; unknown tags old senders may send are rejected.",
    ),
    _r(
        "UNION_TAG_CHANGED",
        "union",
        "breaking",
        "both",
        "The property that selects the variant changed.",
    ),
    # enums
    _r(
        "ENUM_VALUE_ADDED",
        "enum",
        "info",
        "none",
        "A new value in an open enum; old receivers keep it as an unknown string.",
    ),
    _r(
        "CLOSED_ENUM_VALUE_ADDED",
        "enum",
        "breaking",
        "receiver",
        "A new value in a closed enum; old receivers reject it.",
    ),
    _r(
        "ENUM_VALUE_REMOVED",
        "enum",
        "warning",
        "sender",
        (
            "A value is gone from an open enum; old senders' value is now an unknown string (a "
            "semantic break)."
        ),
    ),
    _r(
        "CLOSED_ENUM_VALUE_REMOVED",
        "enum",
        "breaking",
        "sender",
        "A value is gone from a closed enum; new receivers reject it.",
    ),
    _r(
        "ENUM_OPENED",
        "enum",
        "breaking",
        "receiver",
        "An enum now accepts any string; old receivers reject unknown values.",
    ),
    _r("ENUM_CLOSED", "enum", "breaking", "sender", "An enum no longer accepts unknown strings."),
    # stability (the **UNSTABLE** marker)
    _r(
        "UNSTABLE_MARK_REMOVED",
        "stability",
        "info",
        "none",
        "A method, definition or field was stabilised (UNSTABLE marker removed).",
    ),
    _r(
        "UNSTABLE_MARK_ADDED",
        "stability",
        "warning",
        "both",
        "A method, definition or field is now marked UNSTABLE (may change without notice).",
    ),
    # generated code (source breaks for users of the bindings, even with the wire unchanged)
    _r(
        "CLASS_RENAMED",
        "generated",
        "warning",
        "both",
        "The generated class for the same wire definition has a new Python name.",
    ),
    _r(
        "CLASS_REMOVED",
        "generated",
        "warning",
        "both",
        "A generated class is gone from the package.",
    ),
    _r(
        "ATTRIBUTE_RENAMED",
        "generated",
        "warning",
        "both",
        "A generated model attribute has a new Python name.",
    ),
    # documentation
    _r(
        "DESCRIPTION_CHANGED",
        "docs",
        "info",
        "none",
        "Only the description changed (hidden with --no-docs).",
    ),
)

BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


def rule(rule_id: str) -> Rule:
    """The rule with this ID (KeyError for an unknown one)."""
    return BY_ID[rule_id]
