"""The proxy-chain rules (the proxy-chains RFD and the draft's `proxy/*` definitions) of a
transcript recorded at a proxy's boundary: `client` is the conductor, `agent` the component.

That one connection shows both sides of a proxy: what it receives from its predecessor arrives
plain and goes on wrapped in `proxy/successor`; what its successor sends arrives wrapped in
`proxy/successor` and goes on plain. So forwarding is checked by pairing each message received
with the next one forwarded under the same method (while the received request still awaits its
answer), and each forwarded request's answer with the answer the proxy then gives. A proxy may
rewrite what it forwards (inject context, filter tools); what it must keep is `_meta` (each entry
with its value) and the fields the schema does not define (with their values). A connection with
no `proxy/*` message is no proxy's, and these rules stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp_codegen.transcript.handshake import schema_properties
from acp_codegen.transcript.read import Entry
from acp_codegen.transcript.rules import Finding
from acp_codegen.transcript.wire import METHOD_NOT_FOUND, RevisionChoice, id_key

PROXY_INITIALIZE, PROXY_SUCCESSOR, INITIALIZE = "proxy/initialize", "proxy/successor", "initialize"
# Never wrapped: the conductor picks the initialize kind, cancellation is hop-local (the draft's
# ProxySuccessorRequest), and an envelope in an envelope routes nowhere.
NOT_WRAPPED = {
    PROXY_INITIALIZE: "a proxy forwards `initialize`; the conductor picks the next hop's kind",
    PROXY_SUCCESSOR: "an envelope inside an envelope routes nowhere",
    "$/cancel_request": "cancellation is hop-local: it is never forwarded to another hop",
}
PROXY_RULES = (
    "proxy-initialize-kind",
    "proxy-initialize-forwarded",
    "proxy-protocol-version",
    "proxy-successor-envelope",
    "successor-forwarding",
    "proxy-metadata-preserved",
)


@dataclass
class _Received:
    """A message the proxy received and may forward: the direction it travels, method, params."""

    direction: str  # "down" (from the predecessor) or "up" (from the successor, unwrapped)
    method: str
    params: Any
    line: int
    key: Any = None  # the request's id; None for a notification
    forwarded_as: Any = None  # the id of the request the proxy forwarded it as
    forwarded_line: int = 0


@dataclass
class ProxyChecker:
    """Feed entries in order with `add`; `findings` and `exercised` hold the result."""

    choice: RevisionChoice
    findings: list[Finding] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    init: list[tuple[str, int, bool]] = field(default_factory=list)  # kind, line, deliberate
    successor_line: int = 0  # the first proxy/successor the component sent
    waiting: list[_Received] = field(default_factory=list)
    # requests awaiting their answer, by (sender, id): what they were, to pair the answers
    asked: dict[tuple[str, Any], _Received] = field(default_factory=dict)
    forwarded: dict[Any, _Received] = field(default_factory=dict)  # proxy's request id -> origin
    answers: dict[Any, tuple[Any, int]] = field(default_factory=dict)  # proxy's id -> result

    def _find(self, line: int, rule: str, side: str, message: str) -> None:
        self.findings.append(Finding(line, rule, message, None, side, None))

    def add(self, entry: Entry) -> None:
        """Take the next recorded message."""
        message, line, sender = entry.message, entry.line, entry.sender
        method, key = message.get("method"), id_key(message.get("id"))
        params = message.get("params")
        if not isinstance(method, str):
            if key is not None:
                self._answer(sender, key, message, line)
            return
        if method in (INITIALIZE, PROXY_INITIALIZE) and sender == "client":
            self.init.append((method, line, entry.deliberate))
            self._initialize_kinds(line)
        if method == PROXY_SUCCESSOR:
            self.exercised.add("proxy-successor-envelope")
            inner = self._envelope(sender, params, line, entry.deliberate)
            if sender == "agent" and not self.successor_line:
                self.successor_line = line
                self._initialize_kinds(line)
            if inner is None:
                return
            if sender == "client":  # from the successor: the proxy should pass it on
                self._receive(_Received("up", inner[0], inner[1], line, key))
            else:
                origin = self._forward("down", inner[0], inner[1], line, key)
                if origin is None or origin.params != inner[1]:  # the proxy's own words
                    self._inner_valid(inner[0], inner[1], key is not None, line)
        elif sender == "client":
            received = INITIALIZE if method == PROXY_INITIALIZE else method
            if method != "$/cancel_request":
                self._receive(_Received("down", received, params, line, key))
        else:
            self._forward("up", method, params, line, key)

    def _receive(self, received: _Received) -> None:
        if received.key is not None:
            self.asked[("client", received.key)] = received
        if received.method != "$/cancel_request":
            self.waiting.append(received)

    def _forward(
        self, direction: str, method: str, params: Any, line: int, key: Any
    ) -> _Received | None:
        origin = next(
            (r for r in self.waiting if r.direction == direction and r.method == method), None
        )
        if origin is None:
            return None  # the proxy's own message (injected), not a forwarded one
        if (origin.key is None) != (key is None):
            return None  # a request is not forwarded as a notification, nor the reverse
        self.waiting.remove(origin)
        origin.forwarded_as, origin.forwarded_line = key, line
        if key is not None:
            self.forwarded[key] = origin
        self._preserved(origin, params, line, "forwards")
        return origin

    def _inner_valid(self, method: str, params: Any, request: bool, line: int) -> None:
        """The message a proxy built or rewrote is valid against the schema (what it passes on
        unchanged is its predecessor's business)."""
        revision = self.choice.current
        spec = revision.method("client", method, "request" if request else "notification")
        def_name = revision.def_name(spec.params if spec is not None else None)
        if def_name is None:
            return
        for problem in revision.validate(def_name, {} if params is None else params)[:3]:
            self._find(
                line,
                "proxy-successor-envelope",
                "agent",
                f"proxy/successor carries {method} params that the schema refuses: "
                f"{problem.message} (at /params/params{problem.pointer})",
            )

    def _answer(self, sender: str, key: Any, message: dict[str, Any], line: int) -> None:
        if sender == "client":  # the answer to one of the proxy's requests
            if key in self.forwarded and "result" in message:
                self.answers[key] = (message["result"], line)
            return
        origin = self.asked.pop(("client", key), None)
        if origin is None:
            return
        if origin in self.waiting:
            self.waiting.remove(origin)
        error = message.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if self._is_proxy() and origin.method != INITIALIZE:
            self.exercised.add("successor-forwarding")
            if code == METHOD_NOT_FOUND and origin.forwarded_as is None:
                self._find(
                    line,
                    "successor-forwarding",
                    "agent",
                    f"answered {origin.method} (line {origin.line}, from its "
                    f"{'predecessor' if origin.direction == 'down' else 'successor'}) -32601 "
                    "instead of forwarding a request it does not understand",
                )
        if origin.method == INITIALIZE and origin.direction == "down" and self._proxied():
            self._initialized(origin, message, line)
        answer = self.answers.pop(origin.forwarded_as, None) if origin.forwarded_as else None
        if answer is not None and "result" in message:
            self._meta_kept(answer[0], message["result"], line, f"the answer to {origin.method}")

    def _initialized(self, origin: _Received, message: dict[str, Any], line: int) -> None:
        if "result" not in message:
            return
        self.exercised.add("proxy-initialize-forwarded")
        if origin.forwarded_as is None:
            self._find(
                line,
                "proxy-initialize-forwarded",
                "agent",
                f"answered the proxy/initialize of line {origin.line} without first forwarding "
                "`initialize` to its successor through proxy/successor",
            )
            return
        answer = self.answers.get(origin.forwarded_as)
        if answer is None or not isinstance(answer[0], dict):
            return
        self.exercised.add("proxy-protocol-version")
        mine, theirs = _at(message["result"], "protocolVersion"), answer[0].get("protocolVersion")
        if mine != theirs:
            self._find(
                line,
                "proxy-protocol-version",
                "agent",
                f"answered proxy/initialize with protocolVersion {mine!r}, but its successor's "
                f"initialize answer (line {answer[1]}) has {theirs!r}",
            )

    def _proxied(self) -> bool:
        return any(kind == PROXY_INITIALIZE for kind, _, _ in self.init)

    def _is_proxy(self) -> bool:
        return self._proxied() or self.successor_line > 0

    def _initialize_kinds(self, line: int) -> None:
        if not self._is_proxy():
            return
        self.exercised.add("proxy-initialize-kind")
        kinds = {kind for kind, _, _ in self.init}
        if len(kinds) > 1 and line == self.init[-1][1] and not self.init[-1][2]:
            self._find(
                line,
                "proxy-initialize-kind",
                "client",
                "sent both initialize and proxy/initialize to one component: its role is one",
            )
        plain = next((i for i in self.init if i[0] == INITIALIZE and not i[2]), None)
        if plain is not None and self.successor_line and line == self.successor_line:
            self._find(
                plain[1],
                "proxy-initialize-kind",
                "client",
                f"sent plain initialize to a component that acts as a proxy (proxy/successor on "
                f"line {self.successor_line}): a proxy gets proxy/initialize",
            )

    def _envelope(
        self, sender: str, params: Any, line: int, deliberate: bool
    ) -> tuple[str, Any] | None:
        """The method and params a proxy/successor carries, or None with a finding."""
        problem, inner = _envelope_problem(params)
        rule = "proxy-successor-envelope"
        if inner is not None and inner[0] in NOT_WRAPPED:
            problem = f"carries {inner[0]}: {NOT_WRAPPED[inner[0]]}"
            if inner[0] == PROXY_INITIALIZE:
                rule = "proxy-initialize-kind"
                self.exercised.add(rule)
        if problem is None:
            return inner
        if not deliberate:
            self._find(line, rule, sender, f"proxy/successor {problem}")
        return None

    def _preserved(self, origin: _Received, params: Any, line: int, verb: str) -> None:
        self.exercised.add("proxy-metadata-preserved")
        where = f"the {origin.method} of line {origin.line}"
        self._meta_kept(origin.params, params, line, where)
        if not isinstance(origin.params, dict):
            return
        sender = "client" if origin.direction == "down" else "agent"
        kind = "request" if origin.key is not None else "notification"
        known = self._known_fields(sender, origin.method, kind)
        if known is None:
            return
        for name, value in origin.params.items():
            if name == "_meta" or name in known:
                continue
            if not isinstance(params, dict) or params.get(name) != value:
                self._find(
                    line,
                    "proxy-metadata-preserved",
                    "agent",
                    f"{verb} {where} without its unknown field {name!r} as received",
                )

    def _meta_kept(self, before: Any, after: Any, line: int, where: str) -> None:
        self.exercised.add("proxy-metadata-preserved")
        meta = _at(before, "_meta")
        if not isinstance(meta, dict):
            return
        kept = _at(after, "_meta")
        kept = kept if isinstance(kept, dict) else {}
        lost = [name for name, value in meta.items() if name not in kept or kept[name] != value]
        if lost:
            self._find(
                line,
                "proxy-metadata-preserved",
                "agent",
                f"passed on {where} without _meta {', '.join(map(repr, lost))} as received",
            )

    def _known_fields(self, sender: str, method: str, kind: str) -> set[str] | None:
        revision = self.choice.current
        spec = revision.method(sender, method, kind)
        def_name = revision.def_name(spec.params if spec is not None else None)
        if def_name is None:
            return None  # an extension method: every field is its own
        return set(schema_properties(revision, revision.defs.get(def_name, {})))


def _envelope_problem(params: Any) -> tuple[str | None, tuple[str, Any] | None]:
    if not isinstance(params, dict):
        return "params are not an object", None
    method = params.get("method")
    if not isinstance(method, str) or not method:
        return "has no string `method` (the wrapped message's method)", None
    inner = params.get("params")
    if inner is not None and not isinstance(inner, (dict, list)):
        return f"carries {method} with params that are neither an object nor an array", None
    return None, (method, inner)


def _at(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None
