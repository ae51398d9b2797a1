"""Robust reading: JSON Lines split on `\\n` only, absurd lines become findings or one-line errors
(never a traceback), and memory stays near one connection's state while a big file streams.
Also the rules only a hand-written transcript can reach (v1 capability gates, terminal auth)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from acp_codegen.sources import project_root
from acp_codegen.transcript.conformance import check_items
from acp_codegen.transcript.read import read_transcript

ROOT = project_root()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_codegen", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def line(sender: str, message: dict[str, object]) -> str:
    return json.dumps({"from": sender, "message": message}, ensure_ascii=False) + "\n"


INIT = [
    line(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}},
        },
    ),
    line(
        "agent",
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": 2,
                "info": {"name": "a", "version": "1"},
                "capabilities": {"session": {}},
            },
        },
    ),
]


def chunk(text: str, message_id: str = "m1") -> str:
    return line(
        "agent",
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": message_id,
                    "content": {"type": "text", "text": text},
                },
            },
        },
    )


def test_line_and_paragraph_separators_inside_strings_are_ordinary_characters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join([*INIT, chunk("a\u2028b\u2029c\u0085d\x0ce\x1cf")]), encoding="utf-8")
    items = list(read_transcript(path))
    assert len(items) == 3
    result = cli("check-transcript", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_line_nested_100k_deep_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    deep = (
        '{"from": "agent", "message": {"jsonrpc": "2.0", "method": "_x", "params": '
        + "[" * 100_000
        + "]" * 100_000
        + "}}\n"
    )
    path.write_text("".join([*INIT, deep]), encoding="utf-8")
    result = cli("check-transcript", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"{path}:3: unreadable-message: [agent]" in result.stdout


def test_a_5000_digit_number_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    big = line(
        "client", {"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}}
    ).replace('"id": 5', '"id": ' + "9" * 5000)
    path.write_text("".join([*INIT, big]), encoding="utf-8")
    result = cli("check-transcript", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "unreadable-message: [client]" in result.stdout and "5000 digits" in result.stdout


def test_an_absurd_line_without_a_recognisable_sender_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    result = cli("check-transcript", str(path))
    assert (
        result.returncode == 2
        and len(result.stderr.splitlines()) == 1
        and "line 1" in result.stderr
    ), result.stderr


def test_memory_stays_near_one_sessions_state_while_a_large_transcript_streams(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.jsonl"
    text = "x" * 10_000
    with path.open("w", encoding="utf-8") as out:
        out.writelines(INIT)
        for _ in range(2_000):  # ~20 MB of chunks of one message
            out.write(chunk(text))
    size = path.stat().st_size
    tracemalloc.start()
    result = check_items(read_transcript(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.findings == ()
    assert peak < size / 4, (peak, size)  # the old reader held ~11x the file


def test_v1_capability_gates_and_terminal_auth_rules_from_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text(
        "".join(
            [
                line(
                    "client",
                    {
                        "jsonrpc": "2.0",
                        "id": 0,
                        "method": "initialize",
                        "params": {"protocolVersion": 1, "clientCapabilities": {}},
                    },
                ),
                line(
                    "agent",
                    {
                        "jsonrpc": "2.0",
                        "id": 0,
                        "result": {
                            "protocolVersion": 1,
                            "agentCapabilities": {},
                            "authMethods": [
                                {"id": "tty", "name": "TTY", "type": "terminal", "args": []}
                            ],
                        },
                    },
                ),
                line(
                    "client",
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "session/new",
                        "params": {"cwd": "/", "mcpServers": []},
                    },
                ),
                line("agent", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}),
                line(
                    "agent",
                    {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "method": "fs/read_text_file",
                        "params": {"sessionId": "s", "path": "/etc/hosts"},
                    },
                ),
                line(
                    "client",
                    {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "error": {"code": -32601, "message": "Method not found"},
                    },
                ),
                line(
                    "agent",
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {
                            "sessionId": "s",
                            "update": {
                                "sessionUpdate": "notice",
                                "severity": "info",
                                "title": "hi",
                            },
                        },
                    },
                ),
            ]
        ),
        encoding="utf-8",
    )
    result = check_items(read_transcript(path))
    assert (
        result.revision == "acp_v1 (unstable)"
    )  # the pinned unstable v1 schema, beside the stable one
    assert any(
        "protocol version 1: checking against acp_v1 (unstable)" in note for note in result.notes
    )
    rules = {(f.line, f.rule, f.side) for f in result.findings}
    assert (5, "capability-gated-request", "agent") in rules
    assert (7, "capability-gated-update", "agent") in rules


def test_a_schema_finding_names_line_side_pointer_and_schema_rule(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            [
                *INIT,
                line(
                    "agent",
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {
                            "sessionId": "s",
                            "update": {"sessionUpdate": "tool_call_update", "title": "no id"},
                        },
                    },
                ),
            ]
        ),
        encoding="utf-8",
    )
    result = cli("check-transcript", "--format", "json", str(path))
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["line"], finding["rule"], finding["side"], finding["pointer"]) == (
        3,
        "schema-invalid",
        "agent",
        "/params/update",
    )
    assert (
        "#/$defs/ToolCallUpdate/required" in finding["message"]
        and "toolCallId" in finding["message"]
    )


def test_schema_fixes_the_revision_even_when_initialize_negotiates_another(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        line(
            "client",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            },
        ),
        encoding="utf-8",
    )
    fixed = json.loads(
        cli("check-transcript", "--format", "json", "--schema", "acp_v2_draft", str(path)).stdout
    )
    assert fixed["schema"] == "acp_v2_draft" and any(
        "as --schema asks" in n for n in fixed["notes"]
    )
    assert {f["rule"] for f in fixed["findings"]} >= {"schema-invalid"}
    auto = json.loads(cli("check-transcript", "--format", "json", str(path)).stdout)
    assert auto["schema"] == "acp_v1 (unstable)"


PARSE_AND_PRINT = "import json, sys, acp_v2_draft as acp; print(acp.parse_update(json.loads(sys.argv[1])).to_dict())"


def test_leniency_hints_are_for_receivers_not_for_the_sender_checked(tmp_path: Path) -> None:
    # `status` carries x-deserialize-default-on-error: a receiver repairs 7 to "no status", but a
    # conforming sender must not send it, so the checker reports it where the bindings accept it.
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": 7}
    bindings = subprocess.run(
        [sys.executable, "-c", PARSE_AND_PRINT, json.dumps(update)],
        capture_output=True,
        text=True,
        check=True,
        cwd=project_root() / "generated",
    )
    assert "status" not in bindings.stdout  # repaired on parse
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            [
                *INIT,
                line(
                    "agent",
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": "s", "update": update},
                    },
                ),
            ]
        ),
        encoding="utf-8",
    )
    result = cli("check-transcript", "--format", "json", str(path))
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["rule"], finding["side"], finding["pointer"]) == (
        "schema-invalid",
        "agent",
        "/params/update/status",
    )
