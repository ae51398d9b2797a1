"""`probe proxy`: start a component as a proxy and play both of its neighbours on the one
connection a conductor has with it: the client's messages arrive plain, and the probe answers
what the proxy forwards through `proxy/successor` as its successor (an agent) would, sending the
successor's own messages wrapped the other way.

The script: `proxy/initialize` (the proxy must forward `initialize`), `session/new` and a
`session/prompt` whose params carry `_meta` and a field no schema defines, a successor turn whose
updates and answers carry `_meta`, and an extension request. The transcript is the one at a
proxy's boundary, so the proxy rules of `check-transcript` (`transcript.proxy`) judge forwarding
and preservation. Then a second, short connection sends plain `initialize`: a component that gets
it is the terminal agent, so it may answer (or refuse) but must not send `proxy/successor`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_codegen.probe.link import Link, PeerGone
from acp_codegen.probe.report import ProbeOutcome
from acp_codegen.probe.run import Timeouts, driven_link, spawn_peer, stop_peer
from acp_codegen.transcript.conformance import Conformance
from acp_codegen.transcript.schema import resolve_revision

META = {"acp-probe/trace": "probe-1", "nested": {"kept": [1, 2]}}
UNKNOWN = ("x-acp-probe-unknown", {"kept": True})
SUCCESSOR_META = {"acp-probe/hop": "successor"}
INFO = {"name": "acp-probe-conductor", "version": "1"}
# What the script makes the proxy forward, and why a proxy must: (method, direction) -> reason.
EXPECTED = {
    ("initialize", "down"): "the proxy MUST forward initialize before answering proxy/initialize",
    ("session/new", "down"): "a pass-through proxy forwards session/new",
    ("session/prompt", "down"): "the prompt carried _meta and an unknown field to forward",
    ("session/update", "up"): "the successor's updates carried _meta to pass back",
    ("_acp-probe/echo", "down"): "a proxy SHOULD forward requests it does not understand",
}


class ProxyScript:
    """The conductor's and the successor's side of one connection to a proxy."""

    def __init__(self, link: Link, version: int, turn_timeout: float) -> None:
        self.link, self.version, self.turn_timeout = link, version, turn_timeout
        self.forwarded: set[tuple[str, str]] = set()
        self.log: list[str] = []
        self._getter: asyncio.Task[dict[str, Any] | None] | None = None

    async def run(self) -> None:
        """The whole script; a proxy that stops answering ends it with a note."""
        try:
            answer = await self.call(
                "proxy/initialize",
                {"protocolVersion": self.version, "info": INFO, "capabilities": {}},
            )
            if "result" not in answer:
                self.log.append(f"proxy/initialize was refused: {answer.get('error')}")
                return
            new = await self.call(
                "session/new",
                {"cwd": "/", "mcpServers": [], "_meta": META, UNKNOWN[0]: UNKNOWN[1]},
                deliberate=True,  # the unknown field is there on purpose
            )
            session = new.get("result", {}).get("sessionId", "probe-session")
            prompt = [{"type": "text", "text": "probe: pass this on"}]
            await self.call(
                "session/prompt",
                {"sessionId": session, "prompt": prompt, "_meta": META, UNKNOWN[0]: UNKNOWN[1]},
                deliberate=True,
            )
            await self.call("_acp-probe/echo", {"ping": 1, "_meta": META})
            # notifications forwarded after the last answer
            await self._drain(0.2)
        except (PeerGone, TimeoutError) as gone:
            self.log.append(f"the script stopped: {gone}")
        finally:
            if self._getter is not None:
                self._getter.cancel()

    async def call(self, method: str, params: Any, *, deliberate: bool = False) -> dict[str, Any]:
        """Send a request as the conductor and serve the proxy until it is answered."""
        _, future = await self.link.send_request(method, params, deliberate=deliberate)
        async with asyncio.timeout(self.turn_timeout):
            while not future.done():
                getter = self._next()
                await asyncio.wait(_both(future, getter), return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    await self._take(getter)
        return future.result()

    def _next(self) -> asyncio.Task[dict[str, Any] | None]:
        # one getter kept across waits: cancelling a get that already took a message loses it
        if self._getter is None:
            self._getter = asyncio.ensure_future(self.link.inbox.get())
        return self._getter

    async def _take(self, getter: asyncio.Task[dict[str, Any] | None]) -> None:
        self._getter = None
        message = getter.result()
        if message is None:
            self.link.inbox.put_nowait(None)
            raise PeerGone("the proxy closed the connection")
        await self._handle(message)

    async def _drain(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while True:
                    getter = self._next()
                    await asyncio.wait({getter})
                    await self._take(getter)

    async def _handle(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params")
        if method != "proxy/successor":
            self.forwarded.add((str(method), "up"))
            if "id" in message:  # the successor asked nothing, so nothing is to be passed back
                await self.link.respond(message, error={"code": -32601, "message": "unexpected"})
            return
        inner = params.get("method") if isinstance(params, dict) else None
        inner_params = params.get("params") if isinstance(params, dict) else None
        self.forwarded.add((str(inner), "down"))
        if "id" in message:
            result, error = await self._successor(str(inner), inner_params)
            await self.link.respond(message, result, error)

    async def _successor(self, method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        """What the successor (an agent) answers to what the proxy forwarded."""
        got = params if isinstance(params, dict) else {}
        if method == "initialize":
            version = got.get("protocolVersion", self.version)
            return {
                "protocolVersion": version,
                "info": {"name": "acp-probe-successor", "version": "1"},
                "capabilities": {"session": {}},
                "_meta": SUCCESSOR_META,
            }, None
        if method == "session/new":
            return {"sessionId": "probe-session", "_meta": SUCCESSOR_META}, None
        if method == "session/prompt":
            session, message_id = got.get("sessionId"), "probe-user-1"
            content = got.get("prompt") if isinstance(got.get("prompt"), list) else []
            for update in (
                {"sessionUpdate": "user_message", "messageId": message_id, "content": content},
                {"sessionUpdate": "state_update", "state": "running"},
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            ):
                wrapped = {"sessionId": session, "update": update, "_meta": SUCCESSOR_META}
                await self.link.notify(
                    "proxy/successor", {"method": "session/update", "params": wrapped}
                )
            return {"messageId": message_id, "_meta": SUCCESSOR_META}, None
        if method == "_acp-probe/echo":
            return {"echo": params, "_meta": SUCCESSOR_META}, None
        return None, {"code": -32601, "message": f"Method not found: {method}"}

    def misses(self) -> list[tuple[str, str]]:
        """What the proxy never forwarded, each with why it should have."""
        return [
            (f"forward {method} ({'to the successor' if way == 'down' else 'back'})", why)
            for (method, way), why in EXPECTED.items()
            if (method, way) not in self.forwarded
        ]


def _both(*futures: asyncio.Future[Any]) -> set[asyncio.Future[Any]]:
    """A set `asyncio.wait` takes (a response future and an inbox getter differ in type)."""
    return set(futures)


async def plain_initialize(
    process: asyncio.subprocess.Process, timeout: float, version: int
) -> str | None:
    """Send plain `initialize` on a fresh connection: a finding when the component then acts as a
    proxy (sends `proxy/successor`), else None."""
    assert process.stdin is not None and process.stdout is not None
    conformance = Conformance(resolve_revision(None))
    link = Link("client", process.stdout, process.stdin, conformance, None, timeout)
    link.start()
    try:
        _, future = await link.send_request(
            "initialize", {"protocolVersion": version, "info": INFO, "capabilities": {}}
        )
        async with asyncio.timeout(timeout):
            getter = asyncio.ensure_future(link.inbox.get())
            await asyncio.wait(_both(future, getter), return_when=asyncio.FIRST_COMPLETED)
            message = getter.result() if getter.done() else None
            getter.cancel()
        if message is not None and message.get("method") == "proxy/successor":
            if "id" in message:
                await link.respond(message, error={"code": -32603, "message": "no successor"})
            return (
                "initialized with plain initialize (as the terminal agent, with no successor), it "
                "sent proxy/successor: a component acts as a proxy only after proxy/initialize"
            )
        return None
    except (PeerGone, TimeoutError):
        return None  # no answer at all is the version and envelope rules' business, not this one
    finally:
        with contextlib.suppress(OSError):
            process.stdin.close()
        await link.stop()


async def _probe_proxy(
    command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None
) -> ProbeOutcome:
    revision = resolve_revision(schema)
    conformance = Conformance(revision, fixed=schema is not None)
    notes: list[str] = []
    async with driven_link(command, conformance, transcript, timeouts, notes) as link:
        script = ProxyScript(link, revision.version, timeouts.turn)
        await script.run()
        notes.extend(script.log)
    second = await spawn_peer(
        command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    finding = await plain_initialize(second, timeouts.response, revision.version)
    conformance.exercised("proxy-initialize-kind")
    if finding is not None:
        conformance.external("proxy-initialize-kind", "agent", 0, finding)
    await stop_peer(second, timeouts.exit, notes)
    return ProbeOutcome(
        "proxy",
        tuple(command),
        conformance.finish(),
        tuple(notes),
        str(transcript) if transcript else None,
        script.misses(),
    )


def probe_proxy(
    command: Sequence[str], schema: str | None, timeouts: Timeouts, transcript: Path | None
) -> ProbeOutcome:
    """Probe a proxy command: the probe is its conductor, client and successor at once."""
    return asyncio.run(_probe_proxy(command, schema, timeouts, transcript))
