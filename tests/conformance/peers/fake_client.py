"""A small v2 client speaking raw JSON lines (standard library only): starts the agent command
given after `--`, initializes, opens a session, sends one prompt and answers what the agent asks,
following the rules or breaking exactly one with `--defect NAME` (see `CLIENT_DEFECTS` in
tests/conformance/test_broken_peers.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

args = sys.argv[1:]
DEFECT = args[args.index("--defect") + 1] if "--defect" in args else ""
AGENT = args[args.index("--") + 1:]


def main() -> int:
    agent = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
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
    init = request("initialize", {"protocolVersion": 2, "info": {"name": "fake-client", "version": "1"}, "capabilities": caps})
    if DEFECT == "before-init":
        request("session/new", {"cwd": "/tmp"})
    waiting = {init: "initialize"}
    session = None
    for raw in agent.stdout:
        try:
            message = json.loads(raw)
        except ValueError:
            if DEFECT != "no-parse-reply":
                send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        method, mid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:
            kind = waiting.pop(mid, None)
            if kind == "initialize":
                if DEFECT == "logout":
                    request("auth/logout", {})
                if DEFECT in ("login-terminal", "login-unadvertised"):
                    request("auth/login", {"methodId": "probe-terminal" if DEFECT == "login-terminal" else "nope"})
                if DEFECT == "delete":
                    request("session/delete", {"sessionId": "whatever"})
                waiting[request("session/new", {"cwd": "/tmp"})] = "new"
            elif kind == "new":
                session = message["result"]["sessionId"]
                prompt: list[dict[str, Any]] = [{"type": "text", "text": "hello"}]
                if DEFECT == "image":
                    prompt.append({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})
                waiting[request("session/prompt", {"sessionId": session, "prompt": prompt})] = "prompt"
            continue
        if method == "$/cancel_request":
            cancelled.add(params.get("requestId"))
            if DEFECT == "cancel-wrong-code" and params.get("requestId") in held:
                send({"jsonrpc": "2.0", "id": params["requestId"], "error": {"code": -32603, "message": "Internal error"}})
            continue
        if method == "session/update":
            update = params.get("update", {})
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle" and "stopReason" in update:
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
            outcome = {"outcome": "selected"} if DEFECT == "bad-outcome" else {
                "outcome": "selected", "optionId": "not-offered" if DEFECT == "wrong-option" else option}
            send({"jsonrpc": "2.0", "id": mid, "result": {"outcome": outcome}})
        elif DEFECT == "unknown-result":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
    agent.stdin.close()
    agent.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
