"""The JSON-RPC and schema rules of a transcript: envelopes, request/response matching per
direction, strict schema validation of every params / result / error, the extensibility rules,
cancellation, parse-error replies, and (through `Handshake`) initialization, capabilities and
authentication.

State is what a connection needs, nothing per message: the requests awaiting an answer in each
direction, the ones cancelled, the malformed lines awaiting their error reply, and the handshake.
The revision can change once `initialize` negotiates a version (see `RevisionChoice`); an agent
answering a version number over another version's body is `version-echoed` and is read in the
version its body speaks. Against an unstable revision pinned beside its stable one, what only the
stable schema refuses is kept apart (`stable_only`), not reported as a failure.

Blame for requests never answered goes to the side that broke the rule first: a request whose
answer waited on a request the other side itself never answered (a `session/prompt` whose agent
asked permission of a client that never answered) is that other side's finding, not its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acp_runtime.versions import is_v1_body

from acp_codegen.transcript.extensions import ExtensionRules
from acp_codegen.transcript.handshake import Handshake
from acp_codegen.transcript.read import Entry, Unreadable
from acp_codegen.transcript.rules import Finding
from acp_codegen.transcript.schema import Revision

Key = tuple[bool, Any]
PARSE_ERRORS = (-32700, -32600)
CANCELLED = -32800
METHOD_NOT_FOUND = -32601


# A proxy is initialized with `proxy/initialize`, which has `initialize`'s params and answer.
INITIALIZE_METHODS = ("initialize", "proxy/initialize")


def id_key(value: Any) -> Key | None:
    """A request ID as a dictionary key (strings and integers kept apart), None if not an ID."""
    return (
        (isinstance(value, str), value)
        if isinstance(value, (str, int)) and not isinstance(value, bool)
        else None
    )


def other(side: str) -> str:
    """The other side of the connection."""
    return "agent" if side == "client" else "client"


@dataclass
class _Pending:
    method: str
    params: Any
    line: int
    copies: int = 0  # further requests sent with the same id while this one was pending


class RevisionChoice:
    """The revision to check against: fixed when given, else chosen by the version `initialize`
    names (the default pin, or the first pin describing the negotiated version)."""

    def __init__(
        self, revision: Revision, fixed: bool, lookup: Callable[[int], Revision | None]
    ) -> None:
        self.current, self.fixed, self.lookup = revision, fixed, lookup
        self.notes: list[str] = []

    def for_version(self, version: Any, line: int) -> None:
        """Switch to the revision of a protocol `version` named on `line`, when allowed and
        needed."""
        if not isinstance(version, int) or version == self.current.version:
            return
        if self.fixed:
            self.notes.append(
                f"line {line}: protocol version {version}, but checking against "
                f"{self.current.label} (version {self.current.version}) as --schema asks"
            )
            return
        found = self.lookup(version)
        if found is None:
            self.notes.append(
                f"line {line}: protocol version {version} has no pinned schema; checking against "
                f"{self.current.label}"
            )
            return
        self.notes.append(
            f"line {line}: protocol version {version}: checking against {found.label}"
        )
        self.current = found


class WireChecker:
    """Feed items in order with `add`, then `finish`; `findings` and `exercised` hold the
    results."""

    def __init__(self, choice: RevisionChoice) -> None:
        self.choice = choice
        self.findings: list[Finding] = []
        self.stable_only: list[Finding] = []  # refused by the stable revision only (see module doc)
        self.exercised: set[str] = set()
        self.pending: dict[str, dict[Key, _Pending]] = {"client": {}, "agent": {}}
        self.cancelled: dict[str, set[Key]] = {"client": set(), "agent": set()}
        self.malformed: dict[str, list[int]] = {
            "client": [],
            "agent": [],
        }  # lines awaiting a reply from the key side
        self.handshake = Handshake(self._report, self.exercised)
        self._line, self._sender, self._deliberate = 0, "client", False
        self._extensions: dict[str, ExtensionRules] = {}

    @property
    def revision(self) -> Revision:
        """The revision messages are checked against now."""
        return self.choice.current

    def _report(self, rule: str, side: str, message: str, pointer: str | None) -> None:
        if self._deliberate and side == self._sender:
            return
        self.findings.append(Finding(self._line, rule, message, None, side, pointer))

    def _schema(self, def_py: str | None, value: Any, where: str, what: str) -> None:
        def_name = self.revision.def_name(def_py)
        if def_name is None or def_py is None:
            return
        self.exercised.update(
            (
                "schema-invalid",
                "custom-root-field",
                "open-enum-custom-value",
                "open-union-custom-tag",
            )
        )
        found = self._problems(self.revision, def_name, def_py, value)
        for rule, pointer, message in found:
            if rule != "schema-invalid":
                self.exercised.add(rule)
            self._report(rule, self._sender, f"{what}: {message}", where + pointer)
        stable = self.revision.stable
        if (
            stable is None
            or self._deliberate
            or def_name not in stable.defs
            or stable.protocol.get(def_py) is None
        ):
            return
        for rule, pointer, message in self._problems(stable, def_name, def_py, value) - found:
            self.stable_only.append(
                Finding(
                    self._line,
                    rule,
                    f"{what}: {message} (only the stable schema " f"{stable.label} refuses it)",
                    None,
                    self._sender,
                    where + pointer,
                )
            )

    def _problems(
        self, revision: Revision, def_name: str, def_py: str, value: Any
    ) -> set[tuple[str, str, str]]:
        """(rule, pointer, message) of every schema and extensibility problem of `value` in
        `revision`."""
        found = {
            ("schema-invalid", problem.pointer, f"{problem.message} (schema {problem.rule})")
            for problem in revision.validate(def_name, value)
        }
        rules = self._extensions.get(revision.label)
        if rules is None:
            rules = self._extensions[revision.label] = ExtensionRules(revision)
        found.update(
            (problem.rule, problem.pointer, problem.message)
            for problem in rules.check(def_py, value)
        )
        return found

    def add(self, item: Entry | Unreadable) -> None:
        """Take the next recorded item."""
        self._line, self._sender, self._deliberate = item.line, item.sender, item.deliberate
        self.exercised.add("unreadable-message")
        if isinstance(item, Unreadable):
            self._report("unreadable-message", item.sender, item.problem, None)
            self.malformed[other(item.sender)].append(item.line)
            return
        message = item.message
        self.exercised.add("jsonrpc-envelope")
        if message.get("jsonrpc") != "2.0":
            self._report(
                "jsonrpc-envelope",
                item.sender,
                f"jsonrpc is {message.get('jsonrpc')!r}, not \"2.0\"",
                "/jsonrpc",
            )
        method = message.get("method")
        if "method" in message and not isinstance(method, str):
            self._report("jsonrpc-envelope", item.sender, "method is not a string", "/method")
        elif isinstance(method, str):
            self._call(item.sender, method, message)
        else:
            self._response(item.sender, message)

    def _call(self, sender: str, method: str, message: dict[str, Any]) -> None:
        params = message.get("params", {})
        kind = "request" if "id" in message else "notification"
        if kind == "request":
            key = id_key(message["id"])
            self.exercised.add("request-id-in-use")
            if key is None:
                self._report(
                    "jsonrpc-envelope",
                    sender,
                    f"request id {message['id']!r} is neither a string nor an integer",
                    "/id",
                )
            elif key in self.pending[sender]:
                self._report(
                    "request-id-in-use",
                    sender,
                    f"id {message['id']!r} is still awaiting the response to the "
                    f"{self.pending[sender][key].method} of line {self.pending[sender][key].line}",
                    "/id",
                )
                self.pending[sender][key].copies += 1  # its answers are not the responder's fault
            else:
                self.pending[sender][key] = _Pending(method, params, self._line)
            self._initialize_first(sender, method)
        if method in INITIALIZE_METHODS and sender == "client":
            self.choice.for_version(
                params.get("protocolVersion") if isinstance(params, dict) else None, self._line
            )
        spec = self.revision.method(sender, method, kind)
        self.exercised.add("extension-method-name")
        if spec is None:
            if not method.startswith("_"):
                self._report(
                    "extension-method-name",
                    sender,
                    f"{sender} sent {kind} {method!r}, which the schema does "
                    f"not define for the {sender} and which is not `_`-prefixed",
                    "/method",
                )
            return
        self._schema(spec.params, params, "/params", f"{method} params")
        if method in INITIALIZE_METHODS:
            self.handshake.initialize_request(params)
        elif method == "$/cancel_request":
            target = id_key(params.get("requestId")) if isinstance(params, dict) else None
            if target is not None and target in self.pending[sender]:
                self.cancelled[sender].add(target)
        else:
            self.handshake.request(self.revision, sender, method, params)
            self._update_gates(sender, method, params)

    def _initialize_first(self, sender: str, method: str) -> None:
        if (
            sender != "client"
            or method in (*INITIALIZE_METHODS, "$/cancel_request")
            or method.startswith("_")
        ):
            return
        self.exercised.add("initialize-first")
        if self.handshake.client_caps is not None and self.handshake.agent_caps is None:
            self._report(
                "initialize-first",
                "client",
                f"{method} before a successful initialize response",
                "/method",
            )

    def _update_gates(self, sender: str, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "session/update" and isinstance(params.get("update"), dict):
            tag = params["update"].get("sessionUpdate")
            if isinstance(tag, str):
                self.handshake.gate(
                    self.revision, sender, f"update:{tag}", params, "/params/update/sessionUpdate"
                )
        elif method == "session/prompt" and isinstance(params.get("prompt"), list):
            for index, block in enumerate(params["prompt"]):
                if isinstance(block, dict) and isinstance(block.get("type"), str):
                    self.handshake.gate(
                        self.revision,
                        sender,
                        f"content:{block['type']}",
                        params,
                        f"/params/prompt/{index}/type",
                    )

    def _response(self, sender: str, message: dict[str, Any]) -> None:
        has_result, has_error = "result" in message, "error" in message
        if has_result == has_error or "id" not in message:
            self._report(
                "jsonrpc-envelope",
                sender,
                "a response needs an id and exactly one of result and error",
                None,
            )
            return
        error = message.get("error")
        if message["id"] is None:
            self.exercised.add("parse-error-reply")
            code = error.get("code") if isinstance(error, dict) else None
            if has_error and code in PARSE_ERRORS and self.malformed[sender]:
                self.malformed[sender].pop(0)
            else:
                self._report(
                    "jsonrpc-envelope",
                    sender,
                    "id null is only for the error reply to a line that was " "not a request",
                    "/id",
                )
            if has_error:
                self._schema(self._error_def(), error, "/error", "error")
            return
        key = id_key(message["id"])
        self.exercised.add("response-unknown-id")
        request = self.pending[other(sender)].get(key) if key is not None else None
        if request is not None and request.copies:
            request.copies -= 1
        elif request is not None:
            del self.pending[other(sender)][key]  # type: ignore[arg-type]
        if request is None:
            self._report(
                "response-unknown-id",
                sender,
                f"response to id {message['id']!r}, which no pending "
                f"{other(sender)} request has",
                "/id",
            )
            return
        spec = self.revision.method(other(sender), request.method, "request")
        cancelled = key in self.cancelled[other(sender)]
        self.cancelled[other(sender)].discard(key)
        if has_error:
            self._schema(self._error_def(), error, "/error", f"error answering {request.method}")
            if cancelled:
                self.exercised.add("error-code-cancelled")
                code = error.get("code") if isinstance(error, dict) else None
                if code != CANCELLED:
                    self._report(
                        "error-code-cancelled",
                        sender,
                        f"{request.method} of line {request.line} was "
                        f"cancelled; the error must be -32800, not {code!r}",
                        "/error/code",
                    )
        self._capability_used(sender, request, error if has_error else None)
        if spec is None and not request.method.startswith("_"):
            self.exercised.add("method-not-found")
            code = error.get("code") if isinstance(error, dict) else None
            if code != -32601:
                self._report(
                    "method-not-found",
                    sender,
                    f"{request.method} (line {request.line}) is no method of the protocol, yet "
                    f"the answer is {'error ' + repr(code) if has_error else 'a result'}, not "
                    "-32601",
                    "/error/code" if has_error else "/result",
                )
        if has_error:
            return
        is_init = (
            request.method in INITIALIZE_METHODS
            and sender == "agent"
            and isinstance(message["result"], dict)
        )
        if (
            is_init
        ):  # the answer is read in the version it negotiates (its body's, when they differ)
            self.choice.for_version(self._negotiated(message["result"]), self._line)
            spec = self.revision.method(other(sender), request.method, "request")
        if spec is not None:
            self._schema(spec.result, message["result"], "/result", f"{request.method} result")
        if request.method == "session/request_permission":
            self._permission(request.params, message["result"])
        if is_init:
            self.handshake.initialize_result(message["result"])

    def _negotiated(self, result: dict[str, Any]) -> Any:
        """The version an `initialize` answer speaks; `version-echoed` when its number says
        another."""
        version = result.get("protocolVersion")
        self.exercised.add("version-echoed")
        if isinstance(version, int) and version != 1 and is_v1_body(result):
            self._report(
                "version-echoed",
                "agent",
                f"answered protocolVersion {version} with a v1 body "
                "(agentCapabilities / agentInfo, no info): it echoed a version it does not speak; "
                "read as version 1 from here on",
                "/result/protocolVersion",
            )
            return 1
        return version

    def _capability_used(self, responder: str, request: _Pending, error: Any) -> None:
        """`capability-unimplemented`: a request the responder's own capabilities allow, answered
        -32601."""
        path = self.handshake.allowed_by(
            self.revision, other(responder), request.method, request.params
        )
        if path is None:
            return
        self.exercised.add("capability-unimplemented")
        code = error.get("code") if isinstance(error, dict) else None
        if code == METHOD_NOT_FOUND:
            self._report(
                "capability-unimplemented",
                responder,
                f"{request.method} (line {request.line}) answered "
                f"-32601 although the {responder} advertised {path}",
                "/error/code",
            )

    def external(self, rule: str, side: str, line: int, message: str) -> None:
        """A finding the recording side judged itself (a time bound, a second connection)."""
        self.exercised.add(rule)
        self.findings.append(Finding(line, rule, message, None, side, None))

    def _permission(self, params: Any, result: Any) -> None:
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if (
            not isinstance(outcome, dict)
            or outcome.get("outcome") != "selected"
            or not isinstance(params, dict)
        ):
            return
        offered = {o.get("optionId") for o in params.get("options") or () if isinstance(o, dict)}
        self.exercised.add("permission-outcome-offered")
        if outcome.get("optionId") not in offered:
            self._report(
                "permission-outcome-offered",
                "client",
                f"selected optionId {outcome.get('optionId')!r} " "is none of the options offered",
                "/result/outcome/optionId",
            )

    def _error_def(self) -> str | None:
        definition = self.revision.protocol.by_def_name("Error")
        return definition.name if definition is not None else None

    def finish(self) -> None:
        """Report what the end of the transcript proves: requests never answered, malformed lines
        never replied to."""
        self.exercised.add("request-unanswered")
        for sender, pending in self.pending.items():
            for request in pending.values():
                waited = self._waited_on(sender, request)
                if waited is not None:  # the other side broke the rule first (see the module doc)
                    continue
                held = [
                    f"the {other(sender)}'s {r.method} of line {r.line}"
                    for r in self.pending[other(sender)].values()
                    if self._waited_on(other(sender), r) is request
                ]
                also = f" (it kept {', '.join(held)} waiting)" if held else ""
                self.findings.append(
                    Finding(
                        request.line,
                        "request-unanswered",
                        f"the {sender}'s {request.method} " f"never got a response{also}",
                        None,
                        other(sender),
                        None,
                    )
                )
        for receiver, lines in self.malformed.items():
            for line in lines:
                self.findings.append(
                    Finding(
                        line,
                        "parse-error-reply",
                        "no error reply (id null, -32700 or -32600) " "to this malformed line",
                        None,
                        receiver,
                        None,
                    )
                )

    def _waited_on(self, sender: str, request: _Pending) -> _Pending | None:
        """The unanswered request of the other side, sent after `request` in its session, that its
        answer waited on (the first such one), if any."""
        session = _session_of(request.params)
        for later in self.pending[other(sender)].values():
            if later.line > request.line and (
                session is None or _session_of(later.params) in (None, session)
            ):
                return later
        return None


def _session_of(params: Any) -> Any:
    return params.get("sessionId") if isinstance(params, dict) else None
