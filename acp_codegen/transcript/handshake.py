"""What `initialize` settles and the rules that depend on it: version negotiation, capability
gating, and the authentication rules.

The gates are data (`GATES`): a method (or a session update tag, or a prompt content type) and
the capability paths in the peer's `initialize` capabilities that allow it, spelled for each
revision; a gate applies to a revision only where one of its paths exists in that revision's
capability definitions, so the table never invents a requirement the schema does not have.
Nothing is judged before an `initialize` exchange was seen (a partial recording proves nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp_codegen.transcript.schema import Revision

Report = Callable[[str, str, str, str | None], None]  # rule, side, message, pointer

# (sender, what, capability paths on the peer: the first that exists in the schema is required)
GATES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("agent", "fs/read_text_file", ("fs.readTextFile",)),
    ("agent", "fs/write_text_file", ("fs.writeTextFile",)),
    *(
        ("agent", f"terminal/{m}", ("terminal",))
        for m in ("create", "output", "release", "wait_for_exit", "kill")
    ),
    ("agent", "update:notice", ("session.notices",)),
    ("agent", "update:compaction_update", ("session.compaction",)),
    ("agent", "update:compaction_summary_chunk", ("session.compaction",)),
    ("agent", "elicitation/create", ("elicitation.$mode",)),
    ("client", "session/load", ("loadSession",)),
    *(
        ("client", f"session/{m}", (f"sessionCapabilities.{m}", "session"))
        for m in ("list", "resume", "close")
    ),
    ("client", "session/delete", ("sessionCapabilities.delete", "session.delete")),
    *(
        ("client", f"session/{m}", ("session",))
        for m in ("new", "prompt", "cancel", "set_config_option")
    ),
    ("client", "session/fork", ("session.fork",)),
    ("client", "session/archive", ("session.archive",)),
    ("client", "session/unarchive", ("session.archive",)),
    ("client", "session/status", ("session.status",)),
    ("client", "session/set_title", ("session.title",)),
    ("client", "auth/status", ("auth.status",)),
    ("client", "logout", ("auth.logout",)),
    *(("client", f"providers/{m}", ("providers",)) for m in ("list", "set", "disable")),
    ("client", "content:image", ("promptCapabilities.image", "session.prompt.image")),
    ("client", "content:audio", ("promptCapabilities.audio", "session.prompt.audio")),
    (
        "client",
        "content:resource",
        ("promptCapabilities.embeddedContext", "session.prompt.embeddedContext"),
    ),
)
GATE_RULES = {"update": "capability-gated-update", "content": "capability-gated-content"}
LOGIN_METHODS = ("auth/login", "authenticate")
AUTH_METHODS = (*LOGIN_METHODS, "auth/logout", "logout")


def capabilities(params: Any, side: str) -> dict[str, Any]:
    """The capabilities object of an `initialize` request (client) or response (agent)."""
    if not isinstance(params, dict):
        return {}
    found = params.get("capabilities", params.get(f"{side}Capabilities"))
    return found if isinstance(found, dict) else {}


def advertised(caps: dict[str, Any], path: str, params: Any = None) -> bool:
    """Whether a dotted capability path is present, not null and not false."""
    node: Any = caps
    for part in path.split("."):
        step = params.get(part[1:]) if part.startswith("$") and isinstance(params, dict) else part
        if (
            not isinstance(node, dict)
            or not isinstance(step, str)
            or step.startswith("$")
            or node.get(step) in (None, False)
        ):
            return False
        node = node[step]
    return True


def gate_path(revision: Revision, sender: str, what: str) -> str | None:
    """The capability path the peer must advertise before `sender` sends `what` in this revision
    (a method, `update:<tag>` or `content:<type>`); None when nothing gates it here."""
    root = "ClientCapabilities" if sender == "agent" else "AgentCapabilities"
    for gate_sender, gated, paths in GATES:
        if gate_sender == sender and gated == what:
            return next((p for p in paths if _schema_has(revision, root, p)), None)
    return None


def _schema_has(revision: Revision, root: str, path: str) -> bool:
    schema: Any = revision.defs.get(root, {})
    for step in path.split("."):
        if step.startswith("$"):
            return True
        schema = schema_properties(revision, schema).get(step)
        if schema is None:
            return False
    return True


def schema_properties(revision: Revision, schema: Any) -> dict[str, Any]:
    """The properties a schema node declares, through `$ref`, `allOf` and `anyOf`."""
    todo: list[Any] = [schema]
    props: dict[str, Any] = {}
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        props.update(node.get("properties") or {})
        if isinstance(node.get("$ref"), str):
            todo.append(revision.defs.get(node["$ref"].rsplit("/", 1)[-1]))
        todo.extend([*(node.get("allOf") or ()), *(node.get("anyOf") or ())])
    return props


@dataclass
class Handshake:
    """State of one connection's `initialize` exchange and the checks that read it."""

    report: Report
    exercised: set[str]
    requested: Any = None
    client_caps: dict[str, Any] | None = None
    agent_caps: dict[str, Any] | None = None
    auth_methods: dict[str, str] = field(default_factory=dict)  # methodId -> type
    negotiated: int | None = None

    def initialize_request(self, params: Any) -> None:
        """A client `initialize` request."""
        self.requested = params.get("protocolVersion") if isinstance(params, dict) else None
        self.client_caps = capabilities(params, "client")

    def initialize_result(self, result: Any) -> None:
        """The agent's successful `initialize` response."""
        self.agent_caps = capabilities(result, "agent")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        self.negotiated = version if isinstance(version, int) else None
        if isinstance(version, int) and isinstance(self.requested, int):
            self.exercised.add("version-negotiation")
            if version > self.requested:
                self.report(
                    "version-negotiation",
                    "agent",
                    f"answered protocolVersion {version} to a request for "
                    f"{self.requested}: never above the requested version",
                    "/result/protocolVersion",
                )
        methods = result.get("authMethods") if isinstance(result, dict) else None
        for index, method in enumerate(methods if isinstance(methods, list) else ()):
            if isinstance(method, dict) and isinstance(method.get("methodId"), str):
                self.auth_methods[method["methodId"]] = str(method.get("type", "agent"))
                self._auth_method(method, f"/result/authMethods/{index}")

    def _auth_method(self, method: dict[str, Any], where: str) -> None:
        if method.get("type") != "terminal":
            return
        self.exercised.update(("auth-env-unique", "auth-terminal-unadvertised"))
        names = [e.get("name") for e in method.get("env") or () if isinstance(e, dict)]
        repeated = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
        if repeated:
            self.report(
                "auth-env-unique",
                "agent",
                f"terminal method {method.get('methodId')!r} repeats env "
                f"name(s) {', '.join(repeated)}",
                f"{where}/env",
            )
        if self.client_caps is not None and not advertised(self.client_caps, "auth.terminal"):
            self.report(
                "auth-terminal-unadvertised",
                "agent",
                f"terminal method {method.get('methodId')!r} "
                "advertised, but the client did not advertise auth.terminal",
                where,
            )

    def request(self, revision: Revision, sender: str, wire: str, params: Any) -> None:
        """A request or notification after `initialize`: gates and authentication rules."""
        if self.agent_caps is None or self.client_caps is None:
            return
        self.gate(revision, sender, wire, params)
        if sender == "client" and wire in AUTH_METHODS:
            self.exercised.add("auth-without-methods")
            if not self.auth_methods:
                self.report(
                    "auth-without-methods",
                    "client",
                    f"{wire} although the agent advertised no authMethods",
                    None,
                )
        if sender == "client" and wire in LOGIN_METHODS and self.auth_methods:
            method_id = params.get("methodId") if isinstance(params, dict) else None
            self.exercised.update(("auth-login-terminal", "auth-login-unadvertised"))
            kind = self.auth_methods.get(method_id) if isinstance(method_id, str) else None
            if kind == "terminal":
                self.report(
                    "auth-login-terminal",
                    "client",
                    f"{wire} for terminal method {method_id!r}",
                    "/params/methodId",
                )
            elif kind is None:
                self.report(
                    "auth-login-unadvertised",
                    "client",
                    f"{wire} for methodId {method_id!r}, which the " "agent did not advertise",
                    "/params/methodId",
                )

    def allowed_by(self, revision: Revision, sender: str, what: str, params: Any) -> str | None:
        """The capability path the peer of `sender` advertised that allows `what`, if it is gated
        and advertised (None otherwise, and before the handshake)."""
        peer_caps = self.client_caps if sender == "agent" else self.agent_caps
        path = gate_path(revision, sender, what)
        if peer_caps is None or path is None or not advertised(peer_caps, path, params):
            return None
        return path

    def gate(
        self, revision: Revision, sender: str, what: str, params: Any, where: str | None = None
    ) -> None:
        """Report `what` (a method, `update:<tag>` or `content:<type>`) sent without the peer's
        capability."""
        peer_caps = self.client_caps if sender == "agent" else self.agent_caps
        path = gate_path(revision, sender, what)
        if peer_caps is None or path is None:
            return
        rule = (
            GATE_RULES.get(what.split(":", 1)[0], "capability-gated-request")
            if ":" in what
            else "capability-gated-request"
        )
        self.exercised.add(rule)
        if not advertised(peer_caps, path, params):
            peer = "client" if sender == "agent" else "agent"
            self.report(
                rule, sender, f"sent {what} although the {peer} did not advertise {path}", where
            )
