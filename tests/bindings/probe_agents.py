"""Agents for the inbound-leniency and lifetime tests: `python probe_agents.py <mode>`.

- `lenient`: serves `session/prompt`, answering with what its handler saw (in `_meta`);
- `where`: serves `initialize`, answering with its working directory and `ACP_PROBE` (in `_meta`);
- `block`: `async with serve_agent(...) as client:` asks the client over the live connection,
  serves until the client sends `_probe/finish`, leaves the block, then reports on stderr;
- `raw`: no bindings at all: answers `initialize` with hand-written JSON lines, first sending
  `session/update` notifications whose fields hold malformed and unknown values.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import acp_v2_draft as acp

INFO = acp.Implementation(name="probe", version="1.0")


class Lenient(acp.Agent):
    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        text = params.prompt[0]
        assert isinstance(text, acp.ContentBlockText) and text.annotations is not None
        seen = {
            "wire": params.to_dict(),
            "meta": [params.meta, "meta" in params.model_fields_set],
            "extra": params.__pydantic_extra__,
            "blocks": [type(b).__name__ for b in params.prompt],
            "unknown_raw": getattr(params.prompt[1], "raw", None),
            "priority": text.annotations.priority,
            "audience": [
                [str(r), r.is_known, r.is_extension] for r in text.annotations.audience or ()
            ],
        }
        return acp.PromptResponse(message_id="m1", meta=seen)


class Where(acp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        meta = {"cwd": os.getcwd(), "probe": os.environ.get("ACP_PROBE")}
        return acp.InitializeResponse(
            protocol_version=params.protocol_version, info=INFO, meta=meta
        )


class Block(acp.Agent):
    def __init__(self) -> None:
        self.finish = asyncio.Event()

    async def extension_notification(self, method: str, params: Any) -> None:
        if method == "_probe/finish":
            self.finish.set()


async def block() -> None:
    agent = Block()
    async with acp.serve_agent(agent) as client:
        answer = await client.ext_request("_probe/inside", {"pid": os.getpid()})
        await client.ext_notify("_probe/answered", {"answer": answer})
        await asyncio.wait_for(agent.finish.wait(), 30)
    print("left the block", file=sys.stderr, flush=True)
    # the connection is closed: our stdout is done, the process exits although stdin is open


def raw() -> None:
    updates = [
        {
            "sessionId": "s1",
            "_meta": 5,
            "x-top": True,
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": 7,
                "title": ["not", "a", "string"],
                "kind": "future_kind",
                "locations": [{"path": "/a"}, {"line": 1}, {"path": "/b", "line": "x"}],
                "x-vendor": {"k": 1},
            },
        },
        {"sessionId": "s1", "update": {"sessionUpdate": "future_update", "foo": [1, 2]}},
    ]
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            for params in updates:
                out = {"jsonrpc": "2.0", "method": "session/update", "params": params}
                sys.stdout.write(json.dumps(out) + "\n")
            answer = {"protocolVersion": 2, "info": {"name": "raw", "version": "1.0"}}
            sys.stdout.write(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}) + "\n"
            )
            sys.stdout.flush()


def main(mode: str) -> None:
    if mode == "raw":
        raw()
    elif mode == "block":
        asyncio.run(block())
    else:
        asyncio.run(acp.serve_agent({"lenient": Lenient, "where": Where}[mode]()))


if __name__ == "__main__":
    main(sys.argv[1])
