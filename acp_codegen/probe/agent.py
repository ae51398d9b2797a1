"""`probe agent`: the probe as a demanding client, driving an agent process over its stdio.

The script: initialize (advertising terminal auth and form elicitation, or the capabilities the
user gave, to see what the agent does with a different client); session/new; a prompt
that streams and may ask permission (granted with an offered option); a prompt that gets
cancelled (pending permission requests answered `cancelled`); session/list, resume and close when
advertised; an unknown method; an extension request and notification; a malformed line; a
response to an id the agent never used; a final request to show the connection still works.
Every step is recorded and checked as it happens; a step the agent does not allow (no session
capability, a negotiated version this script cannot drive) is skipped and shows as not exercised.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp_codegen.probe.link import Link, PeerGone

PROBE_INFO = {"name": "acp-codegen-probe", "title": "acp-codegen probe", "version": "1"}
DEFAULT_CAPABILITIES: dict[str, Any] = {"auth": {"terminal": {}}, "elicitation": {"form": {}}}
DEFAULT_V1_CAPABILITIES: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}


class AgentScript:
    """One run of the client-side script against a started agent."""

    def __init__(self, link: Link, version: int, turn_timeout: float, capabilities: dict[str, Any] | None = None) -> None:
        self.link, self.version, self.turn_timeout = link, version, turn_timeout
        self.capabilities = capabilities  # what the probe advertises; None: its default set
        self.agent_caps: dict[str, Any] = {}
        self.negotiated = version
        self.log: list[str] = []

    async def run(self) -> None:
        """Run every step; a step that cannot go on ends the script (what ran is still checked)."""
        try:
            if not await self.initialize():
                return
            session = await self.new_session()
            if session is not None:
                await self.turn(session, "Hello! Please think, stream, and ask my permission for a pretend tool.")
                await self.turn(session, "A long task that I will cancel.", cancel=True)
                await self.session_methods(session)
            await self.extensions()
        except PeerGone as gone:
            self.log.append(f"stopped: {gone}")

    async def initialize(self) -> bool:
        """Initialize; False when the agent refused."""
        caps = self.capabilities if self.capabilities is not None else DEFAULT_CAPABILITIES
        params: dict[str, Any] = {"protocolVersion": self.version, "info": PROBE_INFO, "capabilities": caps}
        if self.version == 1:
            v1_caps = self.capabilities if self.capabilities is not None else DEFAULT_V1_CAPABILITIES
            params = {"protocolVersion": 1, "clientInfo": PROBE_INFO, "clientCapabilities": v1_caps}
        response = await self.link.request("initialize", params)
        result = response.get("result")
        if not isinstance(result, dict):
            self.log.append("initialize was refused")
            return False
        found = result.get("capabilities", result.get("agentCapabilities"))
        self.agent_caps = found if isinstance(found, dict) else {}
        negotiated = result.get("protocolVersion")
        if isinstance(negotiated, int) and negotiated != self.version:
            self.log.append(f"the agent negotiated protocol version {negotiated} (the probe asked for {self.version})")
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

    async def turn(self, session: str, text: str, *, cancel: bool = False) -> None:
        """One prompt: answer the agent's requests until the work ends (cancelling it if asked)."""
        prompt = asyncio.ensure_future(self.link.request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
            timeout=self.turn_timeout))
        cancelled, idle = False, False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.turn_timeout
        while not (prompt.done() and (idle or self._ends_turn(prompt))):
            remaining = deadline - loop.time()
            if remaining <= 0:
                prompt.cancel()
                raise PeerGone(f"the turn did not end within {self.turn_timeout:g}s")
            get = asyncio.ensure_future(self.link.next_message(remaining))
            done, _ = await asyncio.wait({get} if prompt.done() else {get, prompt}, return_when=asyncio.FIRST_COMPLETED)
            if get not in done:
                get.cancel()
                continue
            message = get.result()
            if message is None:
                raise PeerGone("the agent closed the connection during a turn")
            if cancel and not cancelled and (self._is_work(message) or message.get("method") == "session/request_permission"):
                cancelled = True
                await self.link.notify("session/cancel", {"sessionId": session})
            await self._answer(message, cancelled)
            idle = idle or self._idle(message)
        # the prompt's response can arrive in the same read as requests sent before it: answer
        # those too, or a turn that ends leaves them pending
        for message in self.link.queued():
            await self._answer(message, cancelled)

    async def _answer(self, message: dict[str, Any], cancelled: bool) -> None:
        """Answer one of the agent's requests during a turn (permission granted or cancelled)."""
        if message.get("method") == "session/request_permission" and "id" in message:
            outcome = {"outcome": "cancelled"} if cancelled else self._allow(message.get("params"))
            await self.link.respond(message, {"outcome": outcome})
        elif "id" in message:
            await self.link.respond(message, error={"code": -32601, "message": "Method not found"})

    def _ends_turn(self, prompt: asyncio.Future[dict[str, Any]]) -> bool:
        """Whether the prompt's response itself ends the turn (v1, or an error); raises `PeerGone`."""
        return self.negotiated == 1 or "error" in prompt.result()

    @staticmethod
    def _allow(params: Any) -> dict[str, Any]:
        options = params.get("options") if isinstance(params, dict) else None
        ids = [o.get("optionId") for o in options or () if isinstance(o, dict)]
        return {"outcome": "selected", "optionId": ids[0]} if ids else {"outcome": "cancelled"}

    @staticmethod
    def _update(message: dict[str, Any]) -> dict[str, Any]:
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) and message.get("method") == "session/update" else None
        return update if isinstance(update, dict) else {}

    def _is_work(self, message: dict[str, Any]) -> bool:
        update = self._update(message)
        return update.get("state") == "running" or update.get("sessionUpdate") in ("agent_message_chunk", "tool_call_update")

    def _idle(self, message: dict[str, Any]) -> bool:
        update = self._update(message)
        return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle" and "stopReason" in update

    async def session_methods(self, session: str) -> None:
        """session/list, session/resume and session/close where the agent offers them."""
        caps = self.agent_caps.get("session") if self.negotiated != 1 else self.agent_caps.get("sessionCapabilities")
        if not isinstance(caps, dict):
            return
        v1 = self.negotiated == 1
        if not v1 or isinstance(caps.get("list"), dict):
            await self.link.request("session/list", {})
        if not v1 or isinstance(caps.get("resume"), dict):
            await self.link.request("session/resume", {"sessionId": session, "cwd": os.getcwd(), "mcpServers": []},
                                    timeout=self.turn_timeout)
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
                await self.link.respond(message, error={"code": -32601, "message": "Method not found"})

    async def extensions(self) -> None:
        """An unknown method, an extension request and notification, a malformed line, a
        response to an id never used, and a last request that must still be answered."""
        await self.link.request("probe/unknown_method", {}, deliberate=True)
        await self.link.request("_acp_codegen/probe_request", {"probe": True})
        await self.link.notify("_acp_codegen/probe_notification", {"probe": True})
        await self.link.send_raw('{"jsonrpc": "2.0", "id": 99, "method": ')
        await self.link.send({"jsonrpc": "2.0", "id": "never-used-by-the-agent", "result": {}}, deliberate=True)
        await self.link.request("_acp_codegen/probe_request", {"still": "there"})
        await self._drain()
