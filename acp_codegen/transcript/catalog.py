"""The rule catalogue: every rule `check-transcript` and the probes enforce, as data.

Each rule has an ID, the page and section of the spec it comes from (pages under
`../shared/spec/`; `schema` means the schema revision being checked against, whose own texts win
over older pages), the side it binds (`agent`, `client`, or `sender` / `receiver` when it binds
whichever side sent or received the message concerned) and the requirement. The prompt-lifecycle
rules keep their wording in `rules.RULES`; docs/conformance.md's table is rendered from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acp_codegen.transcript.rules import RULES as LIFECYCLE_RULES

Binds = Literal["agent", "client", "sender", "receiver"]


@dataclass(frozen=True)
class Rule:
    """One rule: ID, source (page, section), the side it binds, and the requirement."""

    id: str
    page: str
    section: str
    binds: Binds
    requirement: str

    @property
    def source(self) -> str:
        """`page#section` as cited in reports."""
        return f"{self.page} § {self.section}"

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "rule": self.id,
            "source": self.source,
            "binds": self.binds,
            "requirement": self.requirement,
        }


_LIFECYCLE_SECTIONS = {
    "prompt-response-message-id": "MessageId",
    "prompt-message-id-reused": "MessageId",
    "user-message-id-mismatch": "MessageId",
    "user-message-missing": "MessageId",
    "message-id-missing": "MessageId",
    "work-without-running": "Session States",
    "idle-without-stop-reason": "Stop Reasons",
    "update-after-cancelled-idle": "Cancellation",
    "notice-empty-title": "Session Notices",
    "custom-stop-reason": "Stop Reasons",
}

_SPEC: tuple[tuple[str, str, str, Binds, str], ...] = (
    (
        "jsonrpc-envelope",
        "overview.md (JSON-RPC 2.0)",
        "Communication Model",
        "sender",
        (
            "Every message is one JSON-RPC 2.0 request, notification or response: `jsonrpc: "
            '"2.0"`, a string `method`, a string or integer `id` (never null on requests), '
            "exactly one of `result` / `error`."
        ),
    ),
    (
        "unreadable-message",
        "overview.md (JSON-RPC 2.0)",
        "Communication Model",
        "sender",
        (
            "Each line is one complete JSON-RPC message (not malformed JSON, not absurdly nested, "
            "no numbers no reader can hold)."
        ),
    ),
    (
        "schema-invalid",
        "schema",
        "request / notification params, result and error of each method",
        "sender",
        (
            "Params, results and errors are valid against the schema revision in the strict sense "
            "a sender must meet (the x-deserialize leniency hints are for receivers)."
        ),
    ),
    (
        "extension-method-name",
        "extensibility.md",
        "Extension Methods",
        "sender",
        (
            "Methods the protocol does not define are custom extensions, whose names MUST begin "
            "with `_`."
        ),
    ),
    (
        "custom-root-field",
        "extensibility.md",
        "The `_meta` Field",
        "sender",
        (
            "Implementations MUST NOT add custom fields at the root of a type that is part of the "
            "specification (custom data goes under `_meta`; unknown keys are fine only where the "
            "schema allows them)."
        ),
    ),
    (
        "open-enum-custom-value",
        "extensibility.md",
        "Enum and Tagged-Union Variants",
        "sender",
        (
            "Extensions MUST NOT define custom non-underscore values: an open enum value is known "
            "or `_`-prefixed."
        ),
    ),
    (
        "open-union-custom-tag",
        "extensibility.md",
        "Enum and Tagged-Union Variants",
        "sender",
        (
            "Extensions MUST NOT define custom non-underscore values: an open tagged union's tag "
            "is known or `_`-prefixed."
        ),
    ),
    (
        "request-unanswered",
        "extensibility.md",
        "Custom Requests",
        "receiver",
        (
            "Every request gets a response with its `id` (JSON-RPC 2.0; for custom requests: "
            "implementations MUST respond accordingly with the provided `id`)."
        ),
    ),
    (
        "method-not-found",
        "extensibility.md",
        "Custom Requests",
        "receiver",
        (
            "A request for a method the protocol does not define and that is not a `_` extension "
            'cannot be recognized: it gets the standard "Method not found" error, -32601.'
        ),
    ),
    (
        "permission-outcome-offered",
        "schema",
        "RequestPermissionOutcome",
        "client",
        "A `selected` permission outcome names one of the options the Agent offered.",
    ),
    (
        "response-unknown-id",
        "overview.md (JSON-RPC 2.0)",
        "Communication Model",
        "sender",
        "A response answers a request the other side sent and has not been answered yet.",
    ),
    (
        "request-id-in-use",
        "schema",
        "RequestId",
        "sender",
        "A sender MUST NOT reuse an ID while a request with it is still awaiting a response.",
    ),
    (
        "parse-error-reply",
        "error.md (JSON-RPC 2.0 § 5.1)",
        "Error codes",
        "receiver",
        (
            "A line that is not a JSON-RPC message gets an error response with `id: null` and "
            "code -32700 (parse error) or -32600 (invalid request)."
        ),
    ),
    (
        "error-code-cancelled",
        "cancellation.md",
        "`$/cancel_request` Notification",
        "receiver",
        (
            "After `$/cancel_request`, the implementation MUST answer the original request with a "
            "valid response or an error with code -32800."
        ),
    ),
    (
        "cancel-request-honoured",
        "cancellation.md",
        "`$/cancel_request` Notification",
        "receiver",
        (
            "After `$/cancel_request` the implementation MUST answer the original request (a "
            "valid response or -32800); a probe judges it by time: within `--cancel-timeout` "
            "seconds (check-transcript cannot)."
        ),
    ),
    (
        "initialize-first",
        "initialization.md",
        "Initialization",
        "client",
        (
            "Before a session can be created, Clients MUST initialize the connection: no other "
            "request before the `initialize` response."
        ),
    ),
    (
        "version-negotiation",
        "initialization.md",
        "Version Negotiation",
        "agent",
        (
            "The Agent responds with the requested version if it supports it, otherwise with the "
            "highest version it supports at or below it (schema: "
            "InitializeResponse.protocolVersion); never a higher one."
        ),
    ),
    (
        "version-echoed",
        "initialization.md",
        "Version Negotiation",
        "agent",
        (
            "The Agent answers with a version it supports, not an echo of the request: no version "
            "number over another version's body (`protocolVersion: 2` with v1's "
            "`agentCapabilities`), and no version no schema defines (a probe asks for one on a "
            "second connection)."
        ),
    ),
    (
        "capability-unimplemented",
        "initialization.md",
        "Capabilities",
        "receiver",
        (
            "A method a side advertised through its capabilities is implemented: a request the "
            "capability allows is not answered -32601 (Method not found)."
        ),
    ),
    (
        "capability-gated-request",
        "initialization.md",
        "Capabilities",
        "sender",
        (
            "Capabilities omitted in `initialize` MUST be treated as unsupported: a side sends a "
            "gated method (fs/*, terminal/*, session/load, session/delete, ...) only when the "
            "other side advertised it."
        ),
    ),
    (
        "capability-gated-update",
        "initialization.md",
        "Client Capabilities",
        "agent",
        (
            "Gated session updates (e.g. `notice` where the revision requires `session.notices`, "
            "compaction updates) are sent only when the Client advertised them."
        ),
    ),
    (
        "capability-gated-content",
        "initialization.md",
        "Prompt capabilities",
        "client",
        (
            "Prompts carry image, audio or embedded-resource content only when the Agent "
            "advertised it."
        ),
    ),
    (
        "auth-method-custom-type",
        "authentication.md",
        "Authentication method types",
        "agent",
        "Custom authentication method types MUST begin with `_`.",
    ),
    (
        "auth-env-unique",
        "authentication.md",
        "Terminal authentication",
        "agent",
        "Every `env` entry of a terminal authentication method MUST have a unique `name`.",
    ),
    (
        "auth-terminal-unadvertised",
        "authentication.md",
        "Authentication method types",
        "agent",
        (
            "An Agent may advertise a `terminal` method only when the Client advertised "
            "`auth.terminal`."
        ),
    ),
    (
        "auth-login-terminal",
        "authentication.md",
        "Terminal authentication",
        "client",
        "The Client MUST NOT send `auth/login` (v1: `authenticate`) for a terminal method.",
    ),
    (
        "auth-without-methods",
        "authentication.md",
        "Advertising Authentication",
        "client",
        (
            "If `authMethods` is omitted or empty, Clients MUST NOT call `auth/login` or "
            "`auth/logout`."
        ),
    ),
    (
        "auth-login-unadvertised",
        "authentication.md",
        "Agent-handled authentication",
        "client",
        "`auth/login` names the `methodId` of an authentication method the Agent advertised.",
    ),
    (
        "proxy-initialize-kind",
        "rfds/proxy-chains.md",
        "Proxy initialization protocol",
        "sender",
        (
            "The conductor MUST send `proxy/initialize` to every proxy and `initialize` to the "
            "agent: a component that sends `proxy/successor` got `proxy/initialize`, never plain "
            "`initialize` (and never both); a proxy forwards `initialize`, never "
            "`proxy/initialize`, since the conductor picks the kind for the next hop."
        ),
    ),
    (
        "proxy-initialize-forwarded",
        "schema",
        "InitializeProxyRequest",
        "agent",
        (
            "Before answering `proxy/initialize` successfully, the proxy MUST forward an "
            "`initialize` request to its successor through `proxy/successor`."
        ),
    ),
    (
        "proxy-protocol-version",
        "schema",
        "InitializeProxyResponse",
        "agent",
        (
            "The proxy builds its `proxy/initialize` answer from its successor's `initialize` "
            "answer and MUST NOT change `protocolVersion`."
        ),
    ),
    (
        "proxy-successor-envelope",
        "schema",
        "ProxySuccessorRequest",
        "sender",
        (
            "A `proxy/successor` message wraps one message: a string `method`, `params` an object "
            "or array when present, valid against the schema when the proxy built or rewrote "
            "them; never `$/cancel_request` (cancellation is hop-local) nor another envelope."
        ),
    ),
    (
        "successor-forwarding",
        "rfds/proxy-chains.md",
        "Proxy initialization protocol",
        "agent",
        (
            "The proxy SHOULD forward requests it does not understand: a request from either side "
            "is not answered -32601 (Method not found) without being forwarded."
        ),
    ),
    (
        "proxy-metadata-preserved",
        "rfds/proxy-chains.md",
        "Proxy initialization protocol",
        "agent",
        (
            "The proxy SHOULD preserve metadata fields when forwarding: a message it passes on, "
            "either way, and the answer it passes back keep every `_meta` entry, and every field "
            "the schema does not define, with its value (known fields may be rewritten)."
        ),
    ),
)


def _catalogue() -> tuple[Rule, ...]:
    lifecycle = tuple(
        Rule(
            rule,
            "prompt-lifecycle.md",
            _LIFECYCLE_SECTIONS.get(rule, "Session Compaction"),
            "agent",
            text,
        )
        for rule, text in LIFECYCLE_RULES.items()
    )
    return lifecycle + tuple(Rule(*spec) for spec in _SPEC)


CATALOG: tuple[Rule, ...] = _catalogue()
BY_ID: dict[str, Rule] = {rule.id: rule for rule in CATALOG}

# Open enums and unions whose extension rule a spec page names more precisely than extensibility.md.
SPECIFIC_EXTENSION_RULES = {
    "StopReason": "custom-stop-reason",
    "CompactionStatus": "custom-compaction-status",
    "AuthMethod": "auth-method-custom-type",
}
# ... and open unions selected by a field a spec page has a rule for (the idle state's stop reason).
SPECIFIC_TAG_RULES = {"stopReason": "custom-stop-reason"}
