"""`probe agent`: the probe as a demanding client, driving an agent process over its stdio.

The script: initialize (asking for `--protocol-version`, else the revision's version; advertising
terminal auth and form elicitation, or the capabilities the user gave, to see what the agent does
with a different client); session/new; a prompt that streams and may ask permission (granted with
an offered option); a prompt that gets cancelled with `session/cancel` (pending permission
requests answered `cancelled`); a prompt withdrawn with `$/cancel_request`, whose answer must come
within `Timeouts.cancel` (`cancel-request-honoured`; then `session/cancel` ends the turn);
session/list, resume and close when advertised; an unknown method; an extension request and
notification; a malformed line; a response to an id the agent never used; a final request to show
the connection still works. Every step is recorded and checked as it happens; a step the agent
does not allow is skipped and shows as not exercised.

What the agent advertises decides what must have been exercised (`AgentScript.misses`): a probe
whose run exercised less than that fails, since a green report must mean the agent was tested.
`version_check` is the second, short connection asking for a version no schema defines.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_runtime.versions import is_v1_body

from acp_codegen.probe.link import Link, PeerGone
from acp_codegen.transcript.conformance import Result
from acp_codegen.transcript.read import loads

if TYPE_CHECKING:
    from acp_codegen.probe.run import Timeouts

PROBE_INFO = {"name": "acp-codegen-probe", "title": "acp-codegen probe", "version": "1"}
DEFAULT_CAPABILITIES: dict[str, Any] = {"auth": {"terminal": {}}, "elicitation": {"form": {}}}
DEFAULT_V1_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": False, "writeTextFile": False},
    "terminal": False,
}
UNDEFINED_VERSION = 999  # a protocol version no schema defines: an agent must not echo it
# Rules every agent exercises once initialized, and those a usable session surface adds.
BASELINE = (
    "version-negotiation",
    "version-echoed",
    "method-not-found",
    "request-unanswered",
    "parse-error-reply",
    "response-unknown-id",
    "schema-invalid",
)
SESSION_RULES = ("cancel-request-honoured",)
V2_TURN_RULES = (
    "prompt-response-message-id",
    "user-message-missing",
    "work-without-running",
    "idle-without-stop-reason",
)


class AgentScript:
    """One run of the client-side script against a started agent."""

    def __init__(
        self,
        link: Link,
        version: int,
        timeouts: Timeouts,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.link, self.version, self.timeouts = link, version, timeouts
        self.turn_timeout = timeouts.turn
        self.capabilities = capabilities  # what the probe advertises; None: its default set
        self.agent_caps: dict[str, Any] = {}
        self.negotiated = version
        self.initialized = False
        self.log: list[str] = []

    async def run(self) -> None:
        """Run every step; a step that cannot go on ends the script (what ran is still checked)."""
        try:
            if not await self.initialize():
                return
            session = await self.new_session()
            if session is not None:
                await self.turn(
                    session,
                    "Hello! Please think, stream, and ask my permission for a pretend tool.",
                )
                await self.turn(session, "A long task that I will cancel.", cancel=True)
                await self.turn(
                    session,
                    "A long task that I will withdraw with $/cancel_request.",
                    withdraw=True,
                )
                await self.session_methods(session)
            await self.extensions()
        except PeerGone as gone:
            self.log.append(f"stopped: {gone}")

    async def initialize(self) -> bool:
        """Initialize; False when the agent refused."""
        caps = self.capabilities if self.capabilities is not None else DEFAULT_CAPABILITIES
        params: dict[str, Any] = {
            "protocolVersion": self.version,
            "info": PROBE_INFO,
            "capabilities": caps,
        }
        if self.version == 1:
            v1_caps = (
                self.capabilities if self.capabilities is not None else DEFAULT_V1_CAPABILITIES
            )
            params = {"protocolVersion": 1, "clientInfo": PROBE_INFO, "clientCapabilities": v1_caps}
        response = await self.link.request("initialize", params)
        result = response.get("result")
        if not isinstance(result, dict):
            self.log.append("initialize was refused")
            return False
        self.initialized = True
        found = result.get("capabilities", result.get("agentCapabilities"))
        self.agent_caps = found if isinstance(found, dict) else {}
        negotiated = result.get("protocolVersion")
        if isinstance(negotiated, int) and negotiated != 1 and is_v1_body(result):
            self.log.append(
                f"the agent answered protocol version {negotiated} with a v1 body; the probe goes "
                "on in v1"
            )
            self.negotiated = 1
        elif isinstance(negotiated, int) and negotiated != self.version:
            self.log.append(
                f"the agent negotiated protocol version {negotiated} (the probe asked for "
                f"{self.version})"
            )
            self.negotiated = negotiated
        return True

    @property
    def sessions(self) -> bool:
        """Whether the agent offers the session methods."""
        return self.negotiated == 1 or isinstance(self.agent_caps.get("session"), dict)

    async def new_session(self) -> str | None:
        """session/new, when the agent offers sessions."""
        if not self.sessions:
            self.log.append("the agent advertises no session capability: no session steps")
            return None
        response = await self.link.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        result = response.get("result")
        session = result.get("sessionId") if isinstance(result, dict) else None
        return session if isinstance(session, str) else None

    async def turn(
        self, session: str, text: str, *, cancel: bool = False, withdraw: bool = False
    ) -> None:
        """One prompt: answer the agent's requests until the work ends (cancelling it if asked, or
        withdrawing the prompt with `$/cancel_request` and judging how soon it is answered)."""
        prompt_id, prompt = await self.link.send_request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        )
        cancelled, idle = False, False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.turn_timeout
        withdrawn: tuple[float, int] | None = (
            None  # when `$/cancel_request` went out, on which line
        )
        if (
            withdraw
        ):  # at once: any answer within the bound passes, so the race with a quick one is harmless
            withdrawn = await self._withdraw(prompt_id)
        cancel = (
            cancel or withdraw
        )  # whatever `$/cancel_request` did, `session/cancel` ends the work
        try:
            while not (prompt.done() and (idle or self._ends_turn(prompt))):
                now = loop.time()
                if withdrawn is not None and prompt.done():  # answered within the bound
                    self.link.conformance.exercised("cancel-request-honoured")
                    withdrawn = None
                if withdrawn is not None and now >= withdrawn[0] + self.timeouts.cancel:
                    self.link.conformance.external(
                        "cancel-request-honoured",
                        "agent",
                        withdrawn[1],
                        f"session/prompt withdrawn with "
                        f"$/cancel_request got no answer within {self.timeouts.cancel:g}s",
                    )
                    withdrawn = None
                    if not cancelled:
                        cancelled = True
                        await self.link.notify("session/cancel", {"sessionId": session})
                if now >= deadline:
                    raise PeerGone(f"the turn did not end within {self.turn_timeout:g}s")
                wait = deadline - now
                if withdrawn is not None and not prompt.done():
                    wait = min(wait, withdrawn[0] + self.timeouts.cancel - now)
                get = asyncio.ensure_future(self.link.next_message(max(wait, 0.01)))
                waits: set[asyncio.Future[Any]] = {get} if prompt.done() else {get, prompt}
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if get not in done:
                    get.cancel()
                    continue
                try:
                    message = get.result()
                except PeerGone:
                    continue  # nothing within the wait: check the bounds again
                if message is None:
                    raise PeerGone("the agent closed the connection during a turn")
                started = (
                    self._is_work(message) or message.get("method") == "session/request_permission"
                )
                if cancel and not withdraw and not cancelled and started:
                    cancelled = True
                    await self.link.notify("session/cancel", {"sessionId": session})
                elif withdraw and prompt.done() and not cancelled and started:
                    cancelled = True  # v2: the prompt was answered; end its work the ordinary way
                    await self.link.notify("session/cancel", {"sessionId": session})
                await self._answer(message, cancelled)
                idle = idle or self._idle(message)
            if withdrawn is not None:  # answered (the loop ends only once it is) within the bound
                self.link.conformance.exercised("cancel-request-honoured")
        finally:
            if not prompt.done():
                prompt.cancel()
                self.link.waiting.pop(prompt_id, None)
        # the prompt's response can arrive in the same read as requests sent before it: answer
        # those too, or a turn that ends leaves them pending
        for message in self.link.queued():
            await self._answer(message, cancelled)

    async def _withdraw(self, request_id: int) -> tuple[float, int]:
        """`$/cancel_request` for one of our requests: when it went out, and its transcript line."""
        await self.link.notify("$/cancel_request", {"requestId": request_id})
        return asyncio.get_running_loop().time(), self.link.line

    async def _answer(self, message: dict[str, Any], cancelled: bool) -> None:
        """Answer one of the agent's requests during a turn (permission granted or cancelled)."""
        if message.get("method") == "session/request_permission" and "id" in message:
            outcome = {"outcome": "cancelled"} if cancelled else self._allow(message.get("params"))
            await self.link.respond(message, {"outcome": outcome})
        elif "id" in message:
            await self.link.respond(message, error={"code": -32601, "message": "Method not found"})

    def _ends_turn(self, prompt: asyncio.Future[dict[str, Any]]) -> bool:
        """Whether the prompt's response itself ends the turn (v1, or an error); raises
        `PeerGone`."""
        return self.negotiated == 1 or "error" in prompt.result()

    @staticmethod
    def _allow(params: Any) -> dict[str, Any]:
        options = params.get("options") if isinstance(params, dict) else None
        ids = [o.get("optionId") for o in options or () if isinstance(o, dict)]
        return {"outcome": "selected", "optionId": ids[0]} if ids else {"outcome": "cancelled"}

    @staticmethod
    def _update(message: dict[str, Any]) -> dict[str, Any]:
        params = message.get("params")
        update = (
            params.get("update")
            if isinstance(params, dict) and message.get("method") == "session/update"
            else None
        )
        return update if isinstance(update, dict) else {}

    def _is_work(self, message: dict[str, Any]) -> bool:
        update = self._update(message)
        return update.get("state") == "running" or update.get("sessionUpdate") in (
            "agent_message_chunk",
            "tool_call_update",
        )

    def _idle(self, message: dict[str, Any]) -> bool:
        update = self._update(message)
        return (
            update.get("sessionUpdate") == "state_update"
            and update.get("state") == "idle"
            and "stopReason" in update
        )

    async def session_methods(self, session: str) -> None:
        """session/list, session/resume and session/close where the agent offers them."""
        caps = (
            self.agent_caps.get("session")
            if self.negotiated != 1
            else self.agent_caps.get("sessionCapabilities")
        )
        if not isinstance(caps, dict):
            return
        v1 = self.negotiated == 1
        if not v1 or isinstance(caps.get("list"), dict):
            await self.link.request("session/list", {})
        if not v1 or isinstance(caps.get("resume"), dict):
            await self.link.request(
                "session/resume",
                {"sessionId": session, "cwd": os.getcwd(), "mcpServers": []},
                timeout=self.turn_timeout,
            )
            await self._drain()
        if not v1 or isinstance(caps.get("close"), dict):
            await self.link.request("session/close", {"sessionId": session})

    async def _drain(self) -> None:
        """Answer whatever the agent still sends for a moment (replayed history, late requests)."""
        while True:
            try:
                message = await self.link.next_message(0.3)
            except PeerGone:
                return
            if message is None:
                return
            if "id" in message:
                await self.link.respond(
                    message, error={"code": -32601, "message": "Method not found"}
                )

    async def extensions(self) -> None:
        """An unknown method, an extension request and notification, a malformed line, a
        response to an id never used, and a last request that must still be answered."""
        await self.link.request("probe/unknown_method", {}, deliberate=True)
        await self.link.request("_acp_codegen/probe_request", {"probe": True})
        await self.link.notify("_acp_codegen/probe_notification", {"probe": True})
        await self.link.send_raw('{"jsonrpc": "2.0", "id": 99, "method": ')
        await self.link.send(
            {"jsonrpc": "2.0", "id": "never-used-by-the-agent", "result": {}}, deliberate=True
        )
        await self.link.request("_acp_codegen/probe_request", {"still": "there"})
        await self._drain()

    def misses(self, result: Result) -> list[tuple[str, str]]:
        """Rules not exercised that the agent's own advertisement says should have been: (rule,
        why)."""
        if not self.initialized:
            return [
                ("initialize", "the agent never answered initialize: nothing else could be tested")
            ]
        expected = {rule: "every initialized agent is held to it" for rule in BASELINE}
        if self.negotiated != 1 and not isinstance(self.agent_caps.get("session"), dict):
            return [
                (
                    "session",
                    (
                        "the agent advertises no session capability (initialization.md: omitted "
                        "means it supports no session method), so no prompt could be sent: a "
                        "client can do nothing with it"
                    ),
                )
            ]
        expected.update(
            (rule, "the agent offers sessions, so its prompts were sent") for rule in SESSION_RULES
        )
        if self.negotiated != 1:
            expected.update(
                (rule, "the agent offers sessions, so a v2 turn ran") for rule in V2_TURN_RULES
            )
        session_caps = (
            self.agent_caps.get("session")
            if self.negotiated != 1
            else self.agent_caps.get("sessionCapabilities")
        )
        if isinstance(session_caps, dict) and (
            self.negotiated != 1
            or any(isinstance(session_caps.get(k), dict) for k in ("list", "resume", "close"))
        ):
            expected["capability-unimplemented"] = (
                "the agent advertises session methods, so they were called"
            )
        return [
            (rule, why)
            for rule, why in sorted(expected.items())
            if result.status(rule) == "not-exercised"
        ]


@dataclass(frozen=True)
class VersionJudgement:
    """What the second connection showed: a `version-echoed` finding, or a note."""

    finding: str | None = None
    note: str | None = None


async def version_check(
    process: asyncio.subprocess.Process, timeout: float, shape: int
) -> VersionJudgement:
    """Ask a fresh agent process for `UNDEFINED_VERSION` (params shaped as version `shape`'s) and
    judge its answer; the process's input is closed at the end."""
    assert process.stdin is not None and process.stdout is not None
    if shape == 1:
        params: dict[str, Any] = {
            "protocolVersion": UNDEFINED_VERSION,
            "clientInfo": PROBE_INFO,
            "clientCapabilities": DEFAULT_V1_CAPABILITIES,
        }
    else:
        params = {
            "protocolVersion": UNDEFINED_VERSION,
            "info": PROBE_INFO,
            "capabilities": DEFAULT_CAPABILITIES,
        }
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    try:
        process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        async with asyncio.timeout(timeout):
            while True:
                line = await process.stdout.readline()
                if not line:
                    return VersionJudgement(
                        note=(
                            "second connection: the agent closed it unanswered when asked for "
                            f"protocol version {UNDEFINED_VERSION}"
                        )
                    )
                with contextlib.suppress(ValueError):
                    message = loads(line)
                    if (
                        isinstance(message, dict)
                        and message.get("id") == 0
                        and "method" not in message
                    ):
                        break
    except (TimeoutError, ConnectionError, OSError, ValueError):
        return VersionJudgement(
            note=(
                "second connection: no answer to initialize for protocol version "
                f"{UNDEFINED_VERSION} within {timeout:g}s"
            )
        )
    finally:
        with contextlib.suppress(OSError):
            process.stdin.close()
    result = message.get("result")
    answered = result.get("protocolVersion") if isinstance(result, dict) else None
    if answered == UNDEFINED_VERSION:
        return VersionJudgement(
            finding=(
                f"on a second connection, asked for protocol version {UNDEFINED_VERSION} (which "
                "no schema defines), the agent answered it back instead of the latest version it "
                "supports"
            )
        )
    return VersionJudgement(
        note=(
            f"second connection: asked for protocol version {UNDEFINED_VERSION}, the agent "
            f"answered {json.dumps(answered) if isinstance(result, dict) else 'with an error'}"
        )
    )
