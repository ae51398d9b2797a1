"""`probe client`: the probe as a scripted agent, testing the client that launched it.

It answers `initialize` (the client's version when the revision has it, else its own), session
setup and housekeeping; each `session/prompt` becomes a turn that sends, in order: the inserted
user message, `running`, two interleaved agent messages in chunks, one instance of every
`session/update` variant of the schema (built from the schema's definitions, each checked
against the same rules the client is held to, so the probe itself stays conforming), a
`_`-extension update and an unknown future variant, a permission request, a second one cancelled
with `$/cancel_request`, an extension request, `fs/*` and `terminal/*` requests where the client
advertised them, and the idle state with its stop reason (or the v1 prompt response). What the
client answers and sends is recorded and checked like any transcript.

With `--protocol-version N` the probe speaks only N: it answers `initialize` with N whatever the
client asks for. The updates it sends under an unstable revision pinned beside its stable one are
the stable revision's (what any client of that version must take). A client that never sends a
prompt leaves the turn untested, which `ClientScript.misses` reports as a failure.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from acp_codegen.ir.nodes import TaggedUnion
from acp_codegen.probe.instances import NONE, Instances, instance_for
from acp_codegen.probe.link import Link, PeerGone
from acp_codegen.transcript.conformance import Result
from acp_codegen.transcript.extensions import ExtensionRules
from acp_codegen.transcript.handshake import advertised, capabilities, gate_path
from acp_codegen.transcript.schema import Revision, pinned_for_version

AGENT_INFO = {"name": "acp-codegen-probe", "title": "acp-codegen probe agent", "version": "1"}
SKIPPED_VARIANTS = frozenset({"state_update"})  # the turn sends real state changes itself
NOT_FOUND = {"code": -32601, "message": "Method not found"}


def update_variants(revision: Revision, seeds: int = 40) -> list[dict[str, Any]]:
    """One conforming instance of every known `session/update` variant (schema order)."""
    union = revision.protocol.by_def_name("SessionUpdate")
    method = revision.method("agent", "session/update", "notification")
    notification = revision.def_name(method.params) if method is not None else None
    if (
        not isinstance(union, TaggedUnion)
        or method is None
        or method.params is None
        or notification is None
    ):
        return []
    branches = {
        b.get("properties", {}).get(union.tag_wire, {}).get("const"): b
        for b in _branches(revision.defs["SessionUpdate"])
        if isinstance(b, dict)
    }
    owner, rules = Instances({"$defs": revision.defs}, conforming=True), ExtensionRules(revision)
    out = []
    for tag in union.known_tags:
        if tag in SKIPPED_VARIANTS or tag not in branches:
            continue
        for seed in range(seeds):
            value = instance_for(owner, branches[tag], seed)
            wrapped = {"sessionId": "probe", "update": value}
            if (
                value is not NONE
                and not revision.validate(notification, wrapped)
                and not rules.check(method.params, wrapped)
            ):
                out.append(_lifecycle_safe(value))
                break
    return out


def _branches(definition: dict[str, Any]) -> list[Any]:
    """A union's branches: v2 spells them `anyOf`, v1 `oneOf`."""
    return list(definition.get("anyOf") or definition.get("oneOf") or ())


def _lifecycle_safe(update: dict[str, Any]) -> dict[str, Any]:
    """Compactions keep their order: one started here is in progress (the turn completes it)."""
    if update.get("sessionUpdate") == "compaction_update":
        update = {k: v for k, v in update.items() if k not in ("summary", "error")}
        update.update(status="in_progress", compactionId="probe-compaction")
    elif update.get("sessionUpdate") == "compaction_summary_chunk":
        update = {**update, "compactionId": "probe-compaction"}
    return update


class ClientScript:
    """One run of the agent-side script against a connected client."""

    def __init__(
        self, link: Link | None, revision: Revision, turn_timeout: float, only: int | None = None
    ) -> None:
        self.link_or_none, self.revision, self.turn_timeout = link, revision, turn_timeout
        self.only = only  # the one protocol version the probe speaks (`--protocol-version`)
        self.client_caps: dict[str, Any] = {}
        self.version = revision.version
        self.initialized = False
        self.prompted = False
        self.log: list[str] = []
        self.ids = itertools.count(1)
        self.cancelled: set[str] = set()
        self.turns: list[asyncio.Task[None]] = []

    @property
    def link(self) -> Link:
        """The connection to the client (there is one whenever the script runs)."""
        assert self.link_or_none is not None
        return self.link_or_none

    def misses(self, result: Result) -> list[tuple[str, str]]:
        """What the client should have let the probe test and did not: (rule or step, why)."""
        if not self.initialized:
            return [("initialize", "the client never sent initialize: nothing could be tested")]
        if not self.prompted:
            return [
                (
                    "session/prompt",
                    (
                        "the client sent no prompt: no turn (updates, permission requests, "
                        "cancellation) could be tested"
                    ),
                )
            ]
        expected = (
            "method-not-found",
            "parse-error-reply",
            "request-unanswered",
            "initialize-first",
        )
        return [
            (rule, "every client that ran a turn is held to it")
            for rule in expected
            if result.status(rule) == "not-exercised"
        ]

    async def run(self) -> None:
        """Serve the client until it closes the connection."""
        try:
            while True:
                message = await self.link.next_message(self.turn_timeout)
                if message is None:
                    break
                await self.handle(message)
        except PeerGone as gone:
            self.log.append(f"stopped: {gone}")
        for turn in self.turns:
            if not turn.done():
                turn.cancel()
        await asyncio.gather(*self.turns, return_exceptions=True)

    async def handle(self, message: dict[str, Any]) -> None:
        """Answer one request or take one notification."""
        method, params = message.get("method"), message.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            if method == "session/cancel" and isinstance(params.get("sessionId"), str):
                self.cancelled.add(params["sessionId"])
            return
        if method == "initialize":
            await self.initialize(message, params)
        elif method == "session/new":
            await self.link.respond(message, {"sessionId": f"probe-session-{next(self.ids)}"})
        elif method == "session/prompt":
            self.prompted = True
            self.turns.append(asyncio.ensure_future(self.turn(message, params)))
        elif method == "session/list":
            await self.link.respond(message, {"sessions": []})
        elif method in ("session/close", "session/resume", "auth/login", "auth/logout"):
            await self.link.respond(message, {})
        else:
            await self.link.respond(message, error=NOT_FOUND)

    async def initialize(self, message: dict[str, Any], params: dict[str, Any]) -> None:
        """Answer with the client's version when a pinned revision has it."""
        self.initialized = True
        requested = params.get("protocolVersion")
        if self.only is not None:
            if requested != self.only:
                self.log.append(
                    f"the client asked for protocol version {requested}; the probe speaks only "
                    f"{self.only}"
                )
        elif isinstance(requested, int) and requested != self.revision.version:
            other = pinned_for_version(requested) if requested < self.revision.version else None
            if other is not None:
                self.revision, self.version = other, requested
            self.log.append(
                f"the client asked for protocol version {requested}; the probe answers "
                f"{self.version}"
            )
        self.client_caps = capabilities(params, "client")
        if self.version == 1:
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": False},
                "agentInfo": AGENT_INFO,
                "authMethods": [],
            }
        else:
            result = {
                "protocolVersion": self.version,
                "capabilities": {"session": {}},
                "info": AGENT_INFO,
            }
            if advertised(
                self.client_caps, "auth.terminal"
            ):  # something for auth/login rules to judge
                result["authMethods"] = [
                    {"methodId": "probe-login", "name": "Probe login", "type": "agent"},
                    {
                        "methodId": "probe-terminal",
                        "name": "Probe terminal login",
                        "type": "terminal",
                        "args": ["--login"],
                    },
                ]
        await self.link.respond(message, result)

    async def turn(self, request: dict[str, Any], params: dict[str, Any]) -> None:
        """Everything the probe sends a client during one prompt."""
        session = str(params.get("sessionId"))
        try:
            await self._turn(request, session, params.get("prompt"))
        except PeerGone as gone:
            self.log.append(f"turn stopped: {gone}")

    async def _turn(self, request: dict[str, Any], session: str, prompt: Any) -> None:
        n = next(self.ids)
        user_id, v2 = f"probe-user-{n}", self.version >= 2
        if v2:
            await self.link.respond(request, {"messageId": user_id})
            await self.update(
                session,
                {
                    "sessionUpdate": "user_message",
                    "messageId": user_id,
                    "content": prompt if isinstance(prompt, list) else [],
                },
            )
            await self.update(session, {"sessionUpdate": "state_update", "state": "running"})
        for part in range(4):
            tag = "agent_message_chunk"
            await self.update(
                session,
                {
                    "sessionUpdate": tag,
                    "messageId": f"probe-a{n}-{part % 2}",
                    "content": {
                        "type": "text",
                        "text": f"interleaved part {part} \u2028 of message {part % 2}",
                    },
                },
            )
        for update in update_variants(self.revision.stable or self.revision):
            if session in self.cancelled:
                break
            if self.allowed(f"update:{update['sessionUpdate']}"):
                await self.update(session, update)
        # a revision whose SessionUpdate is closed (v1) rejects even `_` tags: then the probe sends
        # it only to see the client survive it, not as a conforming agent would
        union = self.revision.protocol.by_def_name("SessionUpdate")
        closed = not isinstance(union, TaggedUnion) or union.unknown is None
        await self.update(
            session, {"sessionUpdate": "_acp_codegen_probe", "probe": True}, deliberate=closed
        )
        await self.update(
            session, {"sessionUpdate": "probe_future_variant", "future": True}, deliberate=True
        )
        if v2:
            await self.update(
                session,
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "probe-compaction",
                    "status": "completed",
                },
            )
        await self.permissions(session)
        await self.link.request("_acp_codegen/probe_request", {"probe": True})
        await self.link.request("probe/unknown_method", {}, deliberate=True)
        await self.link.send_raw('{"jsonrpc": "2.0", "id": 99, "method": ')
        await self.client_methods(session)
        stop = "cancelled" if session in self.cancelled else "end_turn"
        self.cancelled.discard(session)
        if v2:
            await self.update(
                session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
            )
        else:
            await self.link.respond(request, {"stopReason": stop})

    async def update(
        self, session: str, update: dict[str, Any], *, deliberate: bool = False
    ) -> None:
        """One session/update notification."""
        await self.link.notify(
            "session/update", {"sessionId": session, "update": update}, deliberate=deliberate
        )

    async def permissions(self, session: str) -> None:
        """A permission request to answer, and one the probe cancels with `$/cancel_request`."""
        options = [
            {"optionId": "probe-allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "probe-reject", "name": "Reject", "kind": "reject_once"},
        ]
        if self.version >= 2:
            params: dict[str, Any] = {
                "sessionId": session,
                "title": "Run the probe's pretend tool?",
                "options": options,
            }
        else:
            params = {
                "sessionId": session,
                "toolCall": {"toolCallId": "probe-call"},
                "options": options,
            }
        await self.link.request("session/request_permission", params, timeout=self.turn_timeout)
        pending = asyncio.ensure_future(
            self.link.request("session/request_permission", params, timeout=self.turn_timeout)
        )
        await asyncio.sleep(0.05)
        await self.link.notify("$/cancel_request", {"requestId": self.link.last_id})
        await pending

    def allowed(self, what: str) -> bool:
        """Whether the client's capabilities let the probe send `what` (a method or
        `update:<tag>`)."""
        path = gate_path(self.revision, "agent", what)
        return path is None or advertised(self.client_caps, path)

    async def client_methods(self, session: str) -> None:
        """fs/* and terminal/* requests, only where the client advertised them (and the revision has
        them): a read of a file that does not exist, and a terminal running `true` taken through its
        life (no `fs/write_text_file`: the probe does not make the client change files)."""
        has = {m.wire_name for m in self.revision.protocol.methods if m.side == "client"}
        if "fs/read_text_file" in has and self.allowed("fs/read_text_file"):
            await self.link.request(
                "fs/read_text_file", {"sessionId": session, "path": "/nonexistent/acp-probe.txt"}
            )
        if "terminal/create" in has and self.allowed("terminal/create"):
            created = await self.link.request(
                "terminal/create", {"sessionId": session, "command": "true"}
            )
            result = created.get("result")
            terminal = result.get("terminalId") if isinstance(result, dict) else None
            if isinstance(terminal, str):
                for method in (
                    "terminal/wait_for_exit",
                    "terminal/output",
                    "terminal/kill",
                    "terminal/release",
                ):
                    if method in has:
                        await self.link.request(
                            method,
                            {"sessionId": session, "terminalId": terminal},
                            timeout=self.turn_timeout,
                        )
