"""A small v2 client speaking raw JSON lines (standard library only): starts the agent command
given after `--`, initializes, opens a session, sends one prompt and answers what the agent asks,
following the rules or breaking exactly one with `--defect NAME` (see `CLIENT_DEFECTS` in
tests/conformance/test_broken_peers.py)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from typing import Any

args = sys.argv[1:]
if "--agent-line" in args:  # the agent as one shell-quoted string, options allowed after it
    AGENT = shlex.split(args[args.index("--agent-line") + 1])
    args = [*args, "--"]
elif any(a.startswith("--agent=") for a in args):
    AGENT = shlex.split(next(a for a in args if a.startswith("--agent="))[len("--agent=") :])
    args = [*args, "--"]
else:
    AGENT = args[args.index("--") + 1 :]
DEFECT = args[args.index("--defect") + 1] if "--defect" in args else ""
# fs and terminal exist only in v1: advertising them (or answering them wrongly) speaks v1
FS = "--fs" in args[: args.index("--")] or DEFECT == "bad-fs-answer"
TERMINAL = "--terminal" in args[: args.index("--")] or DEFECT == "bad-terminal-answer"
SESSION = {
    cap: {} for cap in ("notices", "compaction") if f"--{cap}" in args[: args.index("--")]
}  # v1's session.*
V1 = "--v1" in args[: args.index("--")] or FS or TERMINAL or bool(SESSION)
CLIENT_ANSWERS: dict[str, dict[str, Any]] = {
    "fs/read_text_file": (
        {"content": ["line 1"]} if DEFECT == "bad-fs-answer" else {"content": "line 1\n"}
    ),
    "fs/write_text_file": {},
    "terminal/create": {} if DEFECT == "bad-terminal-answer" else {"terminalId": "term-1"},
    "terminal/output": {"output": "", "truncated": False},
    "terminal/wait_for_exit": {"exitCode": 0},
    "terminal/kill": {},
    "terminal/release": {},
}


def main() -> int:
    agent = subprocess.Popen(
        AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
    )
    assert agent.stdin is not None and agent.stdout is not None
    ids = iter(range(1000))
    cancelled: set[Any] = set()
    held: set[Any] = set()
    asked = 0

    def send(message: dict[str, Any]) -> None:
        agent.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        agent.stdin.flush()  # type: ignore[union-attr]

    def request(method: str, params: dict[str, Any]) -> Any:
        rid = next(ids)
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    caps: dict[str, Any] = {"vendorThing": True} if DEFECT == "root-field" else {}
    if DEFECT in ("login-terminal", "login-unadvertised"):
        caps["auth"] = {"terminal": {}}
    info = {"name": "fake-client", "version": "1"}
    if V1:
        caps.update(
            fs={"readTextFile": FS, "writeTextFile": FS},
            terminal=TERMINAL,
            **({"session": SESSION} if SESSION else {}),
        )
        init = request(
            "initialize", {"protocolVersion": 1, "clientInfo": info, "clientCapabilities": caps}
        )
    else:
        init = request("initialize", {"protocolVersion": 2, "info": info, "capabilities": caps})
    if DEFECT == "before-init":
        request("session/new", {"cwd": "/tmp"})
    waiting = {init: "initialize"}
    session = None
    for raw in agent.stdout:
        try:
            message = json.loads(raw)
        except ValueError:
            if DEFECT != "no-parse-reply":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32700, "message": "Parse error"},
                    }
                )
            continue
        method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:
            kind = waiting.pop(mid, None)
            if kind == "initialize":
                if DEFECT == "logout":
                    request("auth/logout", {})
                if DEFECT in ("login-terminal", "login-unadvertised"):
                    request(
                        "auth/login",
                        {"methodId": "probe-terminal" if DEFECT == "login-terminal" else "nope"},
                    )
                if DEFECT == "open-enum":  # SessionArchiveFilter is open: custom values need `_`
                    request("session/list", {"archived": "vendor_only"})
                if DEFECT == "delete":
                    request("session/delete", {"sessionId": "whatever"})
                waiting[
                    request("session/new", {"cwd": "/tmp", **({"mcpServers": []} if V1 else {})})
                ] = "new"
            elif kind == "new":
                session = message["result"]["sessionId"]
                prompt: list[dict[str, Any]] = [{"type": "text", "text": "hello"}]
                if DEFECT == "image":
                    prompt.append(
                        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
                    )
                waiting[request("session/prompt", {"sessionId": session, "prompt": prompt})] = (
                    "prompt"
                )
            elif kind == "prompt" and V1:
                break  # v1: the prompt's response ends the turn
            continue
        if method == "$/cancel_request":
            cancelled.add(params.get("requestId"))
            if DEFECT == "cancel-wrong-code" and params.get("requestId") in held:
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": params["requestId"],
                        "error": {"code": -32603, "message": "Internal error"},
                    }
                )
            continue
        if method == "session/update":
            update = params.get("update", {})
            if (
                update.get("sessionUpdate") == "state_update"
                and update.get("state") == "idle"
                and "stopReason" in update
            ):
                break
            continue
        if "id" not in message:
            continue
        if method == "session/request_permission":
            if DEFECT == "no-answer":
                continue
            asked += 1
            if DEFECT == "cancel-wrong-code" and asked > 1:
                held.add(mid)  # answered when the cancellation arrives, with the wrong code
                continue
            option = params["options"][0]["optionId"]
            outcome = (
                {"outcome": "selected"}
                if DEFECT == "bad-outcome"
                else {
                    "outcome": "selected",
                    "optionId": "not-offered" if DEFECT == "wrong-option" else option,
                }
            )
            send({"jsonrpc": "2.0", "id": mid, "result": {"outcome": outcome}})
        elif method in CLIENT_ANSWERS and (FS if method.startswith("fs/") else TERMINAL):
            send({"jsonrpc": "2.0", "id": mid, "result": CLIENT_ANSWERS[method]})
        elif DEFECT == "unknown-result":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
    agent.stdin.close()
    agent.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
