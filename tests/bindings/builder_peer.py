"""An agent for the builder tests: `python builder_peer.py <package>`.

`_test/emit` makes it call one session-handle builder with the fields of a wire instance;
`_test/call_client` makes it call one of its peer's (the client's) request or notification
builders; every agent request answers with an error echoing the params it received, and every
agent notification is kept for `_test/seen`.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

acp = importlib.import_module(sys.argv[1])


def _fields(cls: Any, wire: dict[str, Any], names: list[str]) -> dict[str, Any]:
    parsed = cls.from_dict(wire)
    return {n: getattr(parsed, n) for n in names if n in parsed.model_fields_set}


class Peer(acp.Agent):  # type: ignore[misc,name-defined]
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def extension_request(self, method: str, params: Any) -> Any:
        if method == "_test/emit":
            kwargs = _fields(getattr(acp, params["model"]), params["wire"], params["params"])
            await getattr(self.peer.session(params["session"]), params["builder"])(**kwargs)
            return {"sent": True}
        if method == "_test/text":
            session = self.peer.session(params["session"])
            await session.agent_message_chunk("plain text", **params.get("extra", {}))
            return {"sent": True}
        if method == "_test/call_client":
            kwargs = _fields(getattr(acp, params["model"]), params["wire"], params["params"])
            try:
                result = await getattr(self.peer, params["handler"])(**kwargs)
            except acp.RpcError as exc:
                return {"error": exc.data}
            return {"result": None if result is None else result.to_dict()}
        if method == "_test/seen":
            return self.seen
        if method == "_test/sleep":
            try:
                await asyncio.sleep(params["seconds"])
            except asyncio.CancelledError:
                self.seen.append({"cancelled": method})
                raise
            return {"slept": params["seconds"]}
        if method == "_test/unprefixed":
            try:
                await self.peer.ext_request("vendor/x", {})
            except ValueError as exc:
                return {"refused": str(exc)}
        if method == "_test/ask_client":
            try:
                return {"result": await self.peer.ext_request(params["method"], params["params"])}
            except acp.RpcError as exc:
                return {"error": exc.code}
        if method == "_test/custom_update":
            session = self.peer.session(params["session"])
            await session.send(getattr(acp, "Unknown" + params["union"])(**params["fields"]))
            await self.peer.ext_notify("_agent/done", {"n": 1})
            return {"sent": True}
        return await super().extension_request(method, params)

    async def extension_notification(self, method: str, params: Any) -> None:
        self.seen.append({"method": method, "params": params})


def _echo(wire: str) -> Any:
    async def handler(self: Peer, params: Any) -> Any:
        raise acp.RpcError(
            -32099, "echo", {"method": wire, "params": None if params is None else params.to_dict()}
        )

    return handler


def _keep(wire: str) -> Any:
    async def handler(self: Peer, params: Any) -> None:
        self.seen.append({"method": wire, "params": None if params is None else params.to_dict()})

    return handler


for _wire, _spec in acp.AGENT_METHODS.items():
    setattr(Peer, _spec.handler, _echo(_wire) if _spec.kind == "request" else _keep(_wire))

if __name__ == "__main__":
    asyncio.run(acp.serve_agent(Peer()))  # type: ignore[arg-type]
