"""SessionState throughput: 100,000 updates of one long, realistic session.

The session is a sequence of turns, each like a real agent's: a user message, `running`, a
plan, a streamed thought, tool calls with streamed content (some with terminal output), a long
streamed answer, usage, now and then a compaction with a streamed summary, a notice, a session
title, a vendor (unknown) update and an agent_message upsert that replaces streamed content; then
`idle`. Message, tool call and terminal IDs are new every turn, so the timeline keeps growing
(thousands of entities at the end).

Measured with the generated `acp_v2_draft` package:

- `apply`: updates already parsed (`parse_update`), applied in order: updates per second
  overall, for the first 10,000 and for the last 10,000 (flat means the cost of an update does
  not grow with the session);
- `parse + apply`: the same from wire JSON text, as a client receives them;
- peak memory (tracemalloc, in a separate pass) of the state after all updates.

Each figure is the best of `--rounds` runs (the machine's noise only ever slows a run down).

    python bench/session_state.py [--updates 100000] [--window 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v2_draft as acp


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def turn(n: int) -> list[dict[str, Any]]:
    """The updates of one prompt turn (about 130 of them)."""
    user, agent, thought = f"u{n}", f"a{n}", f"t{n}"
    out: list[dict[str, Any]] = [
        {
            "sessionUpdate": "user_message",
            "messageId": user,
            "content": [text(f"Please fix issue #{n} in module_{n % 17}.py")],
        },
        {"sessionUpdate": "state_update", "state": "running"},
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "plan",
                "entries": [
                    {
                        "content": f"step {i}",
                        "priority": "medium",
                        "status": "pending" if i > n % 4 else "completed",
                    }
                    for i in range(4)
                ],
            },
        },
    ]
    out += [
        {
            "sessionUpdate": "agent_thought_chunk",
            "messageId": thought,
            "content": text(f"thinking {i} "),
        }
        for i in range(12)
    ]
    for call in range(3):
        tool = f"c{n}_{call}"
        out.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tool,
                "title": f"Run step {call}",
                "kind": "execute",
                "status": "pending",
                "rawInput": {"command": f"pytest -k case_{call}"},
            }
        )
        out.append(
            {"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "in_progress"}
        )
        if call == 0:
            terminal = f"term{n}"
            out.append(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal,
                    "command": "pytest",
                    "cwd": "/work",
                }
            )
            out += [
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": terminal,
                    "data": base64.b64encode(f"test_{i} PASSED\n".encode()).decode(),
                }
                for i in range(10)
            ]
            out.append(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal,
                    "exitStatus": {"exitCode": 0},
                }
            )
        out += [
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": tool,
                "content": {"type": "content", "content": text(f"line {i}\n")},
            }
            for i in range(6)
        ]
        out.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tool,
                "status": "completed",
                "_meta": {"ms": 12 + call},
            }
        )
    out += [
        {"sessionUpdate": "agent_message_chunk", "messageId": agent, "content": text(f"word{i} ")}
        for i in range(60)
    ]
    out.append(
        {
            "sessionUpdate": "agent_message",
            "messageId": agent,
            "content": [text(f"Fixed issue #{n}.")],
        }
    )
    out.append(
        {
            "sessionUpdate": "usage_update",
            "used": 1000 * (n % 180),
            "size": 200000,
            "cost": {"amount": n / 1000, "currency": "USD"},
        }
    )
    if n % 25 == 24:
        cid = f"cmp{n}"
        out.append(
            {"sessionUpdate": "compaction_update", "compactionId": cid, "status": "in_progress"}
        )
        out += [
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": cid,
                "content": text(f"summary {i} "),
            }
            for i in range(8)
        ]
        out.append(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": cid,
                "status": "completed",
                "summary": [text("Retained context.")],
            }
        )
    if n % 10 == 3:
        out.append({"sessionUpdate": "notice", "severity": "info", "title": f"Rate limit {n}"})
        out.append({"sessionUpdate": "session_info_update", "title": f"Fixing issue #{n}"})
        out.append({"sessionUpdate": "_vendor_progress", "turn": n})
    out.append({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    return out


def session(count: int) -> list[dict[str, Any]]:
    """The first `count` updates of the long session."""
    out: list[dict[str, Any]] = []
    n = 0
    while len(out) < count:
        out += turn(n)
        n += 1
    return out[:count]


def timed_apply(updates: list[Any], window: int) -> tuple[float, float, float]:
    """Seconds for all updates, for the first `window` and for the last `window`."""
    state = acp.SessionState()
    apply = state.apply
    last_start = len(updates) - window
    started = time.perf_counter()
    for update in updates[:window]:
        apply(update)
    first = time.perf_counter() - started
    for update in updates[window:last_start]:
        apply(update)
    middle = time.perf_counter()
    for update in updates[last_start:]:
        apply(update)
    done = time.perf_counter()
    return done - started, first, done - middle


def timed_parse_apply(texts: list[str]) -> float:
    state = acp.SessionState()
    started = time.perf_counter()
    for data in texts:
        state.apply_data(data)
    return time.perf_counter() - started


def peak_memory(updates: list[Any]) -> tuple[int, int, int]:
    """(peak traced bytes while applying, bytes held at the end, timeline length)."""
    tracemalloc.start()
    state = acp.SessionState()
    for update in updates:
        state.apply(update)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, current, len(state.timeline)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    raw = session(args.updates)
    texts = [json.dumps(u) for u in raw]
    parsed = [acp.parse_update(t) for t in texts]
    kinds = {u["sessionUpdate"] for u in raw}
    print(
        f"{len(raw):,} updates, {len(kinds)} kinds, python {sys.version.split()[0]}; best of {args.rounds} round(s) per figure"
    )

    runs = [timed_apply(parsed, args.window) for _ in range(args.rounds)]
    total, first, last = (min(r[i] for r in runs) for i in range(3))
    print(
        f"apply          {len(parsed) / total:12,.0f} updates/s overall  ({total * 1e6 / len(parsed):.2f} us/update)"
    )
    print(f"  first {args.window:,}  {args.window / first:12,.0f} updates/s")
    print(
        f"  last {args.window:,}   {args.window / last:12,.0f} updates/s  (last/first rate: {first / last:.2f})"
    )
    parse_total = min(timed_parse_apply(texts) for _ in range(args.rounds))
    print(f"parse + apply  {len(texts) / parse_total:12,.0f} updates/s overall  (from JSON text)")

    peak, held, entities = peak_memory(parsed)
    print(
        f"peak memory    {peak / 2**20:12.1f} MiB while applying ({held / 2**20:.1f} MiB held at the end, "
        f"{entities:,} timeline entities; parsed updates not counted)"
    )


if __name__ == "__main__":
    main()
