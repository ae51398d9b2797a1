"""A small v2 agent speaking raw JSON lines (standard library only) that follows the rules, or
breaks exactly one when started with `--defect NAME` (the names are `DEFECTS` in
tests/conformance/test_broken_peers.py)."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

DEFECT = sys.argv[sys.argv.index("--defect") + 1] if "--defect" in sys.argv else ""
# the v1 defects break rules whose capability gates only the v1 schema has (fs, terminal, notices)
V1_DEFECTS = (
    "fs-unadvertised",
    "notice-unadvertised",
    "v1-body",
    "ignores-cancel-request",
    "unimplemented-v1",
)
V1 = "--v1" in sys.argv or DEFECT in V1_DEFECTS  # answer version 1, speak v1
UNSTABLE = "--unstable-caps" in sys.argv  # v1: advertise what only v1's unstable schema has
lock = threading.Lock()
waiting: dict[Any, threading.Event] = {}
session_id = "fake-session"


def send(message: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def update(body: dict[str, Any]) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    requested = params.get("protocolVersion", 2)
    if V1:
        session_caps: dict[str, Any] = {"list": {}, "close": {}}
        if UNSTABLE:
            session_caps["fork"] = {}
        # v1-body: the requested version echoed over a v1 body (fast-agent, the PyPI echo agent)
        return {
            "protocolVersion": requested if DEFECT == "v1-body" else 1,
            "agentInfo": {"name": "fake-agent", "version": "1"},
            "agentCapabilities": {"loadSession": False, "sessionCapabilities": session_caps},
        }
    caps: dict[str, Any] = {"session": True} if DEFECT == "session-true" else {"session": {}}
    if DEFECT == "no-session":  # what docs/bindings.md's first agent once advertised: nothing
        caps = {}
    if DEFECT == "echo-version":
        return {
            "protocolVersion": requested,
            "info": {"name": "fake-agent", "version": "1"},
            "capabilities": caps,
        }
    if DEFECT == "root-field":
        caps["vendorThing"] = True
    result: dict[str, Any] = {
        "protocolVersion": 3 if DEFECT == "version-higher" else min(requested, 2),
        "info": {"name": "fake-agent", "version": "1"},
        "capabilities": caps,
    }
    if DEFECT == "auth-type":
        result["authMethods"] = [
            {"methodId": "vendor", "name": "Vendor login", "type": "vendor_sso"}
        ]
    if DEFECT == "auth-terminal-unadvertised":  # whatever the client advertised
        result["authMethods"] = [{"methodId": "tty", "name": "Terminal", "type": "terminal"}]
    if DEFECT == "auth-env":
        result["authMethods"] = [
            {
                "methodId": "tty",
                "name": "Terminal",
                "type": "terminal",
                "env": [{"name": "LOGIN", "value": "1"}, {"name": "LOGIN", "value": "2"}],
            }
        ]
    return result


def turn_v1(request_id: Any, cancelled: threading.Event, text: str = "") -> None:
    update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi from v1"}}
    )
    if (
        DEFECT == "ignores-cancel-request" and "withdraw" in text
    ):  # works on, whatever the client says
        time.sleep(2.5)
        send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})
        return
    if DEFECT == "notice-unadvertised":  # the client did not advertise session.notices
        update({"sessionUpdate": "notice", "severity": "info", "title": "Heads up"})
    if DEFECT == "fs-unadvertised":  # the client advertised neither fs.readTextFile nor terminal
        for rid, method, params in (
            ("fs-1", "fs/read_text_file", {"path": "/tmp/notes.txt"}),
            ("term-1", "terminal/create", {"command": "true"}),
        ):
            waiting[rid] = threading.Event()
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": method,
                    "params": {"sessionId": session_id, **params},
                }
            )
    if not cancelled.is_set():
        waiting["perm-v1"] = event = threading.Event()
        send(
            {
                "jsonrpc": "2.0",
                "id": "perm-v1",
                "method": "session/request_permission",
                "params": {
                    "sessionId": session_id,
                    "toolCall": {"toolCallId": "call-1"},
                    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
                },
            }
        )
        event.wait(5)
    send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"stopReason": "cancelled" if cancelled.is_set() else "end_turn"},
        }
    )


def turn(request_id: Any, prompt: list[Any], cancelled: threading.Event) -> None:
    if V1:
        turn_v1(
            request_id,
            cancelled,
            " ".join(str(b.get("text", "")) for b in prompt if isinstance(b, dict)),
        )
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": {"messageId": f"user-{request_id}"}})
    update({"sessionUpdate": "user_message", "messageId": f"user-{request_id}", "content": prompt})
    update({"sessionUpdate": "state_update", "state": "running"})
    chunk: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Hi \u2028 there"},
    }
    if DEFECT != "chunk-no-message-id":
        chunk["messageId"] = f"agent-{request_id}"
    update(chunk)
    update(
        {"sessionUpdate": "tool_call_update", "title": "Pretend tool"}
        if DEFECT == "tool-call-no-id"
        else {
            "sessionUpdate": "tool_call_update",
            "toolCallId": f"call-{request_id}",
            "title": "Pretend tool",
            **({"kind": "vendor_kind"} if DEFECT == "open-enum" else {}),
        }
    )
    plan = (
        {"type": "items", "entries": []}
        if DEFECT == "plan-no-id"
        else {"type": "items", "planId": "p", "entries": []}
    )
    update({"sessionUpdate": "plan_update", "plan": plan})
    if DEFECT == "custom-tag":
        update({"sessionUpdate": "vendor_progress", "percent": 50})
    if DEFECT == "extension-method":
        send({"jsonrpc": "2.0", "method": "vendor/progress", "params": {}})
    if DEFECT == "bad-jsonrpc":
        send(
            {
                "jsonrpc": "1.0",
                "method": "session/update",
                "params": {
                    "sessionId": session_id,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": "x",
                        "content": {"type": "text", "text": "old"},
                    },
                },
            }
        )
    if DEFECT == "garbage":
        with lock:
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
    if not cancelled.is_set():
        ask = {
            "sessionId": session_id,
            "title": "Run the pretend tool?",
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        }
        ids = ["perm", "perm"] if DEFECT == "reuse-id" else [f"perm-{request_id}"]
        events = []
        for pid in ids:
            events.append(waiting.setdefault(pid, threading.Event()))
            send(
                {"jsonrpc": "2.0", "id": pid, "method": "session/request_permission", "params": ask}
            )
        for event in events:
            event.wait(5)
    stop = "cancelled" if cancelled.is_set() else "end_turn"
    update({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop})


def main() -> None:
    cancelled = threading.Event()
    for raw in sys.stdin:
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
        method, params, mid = message.get("method"), message.get("params") or {}, message.get("id")
        if method is None:
            if mid in waiting:
                waiting[mid].set()
            elif DEFECT == "echo-unknown-id":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": "ghost",
                        "error": {"code": -32600, "message": "unexpected response"},
                    }
                )
            continue
        if "id" not in message:
            if method == "session/cancel":
                cancelled.set()
                for event in list(waiting.values()):
                    event.set()
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": initialize(params)})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": session_id}})
        elif method == "session/prompt":
            cancelled.clear()
            threading.Thread(
                target=turn, args=(mid, params.get("prompt", []), cancelled), daemon=True
            ).start()
        elif method == "session/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"sessions": []}})
        elif (DEFECT == "unimplemented" and method == "session/resume") or (
            DEFECT == "unimplemented-v1" and method == "session/close"
        ):
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )  # advertised, though
        elif (
            method in ("session/resume", "session/close")
            or DEFECT == "unknown-result"
            and not method.startswith("_")
        ):
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif DEFECT == "unanswered" and method.startswith("_"):
            continue
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )


if __name__ == "__main__":
    main()
