"""Throughput of `session/update` notifications: wire bytes -> typed model -> wire bytes.

Compares, on the same realistic mix of messages (agent message chunks, tool call updates with
content, plan updates, state/usage updates; ~350 bytes each):

- the floor: `orjson.loads` / `orjson.dumps` (no typing at all),
- the generated `acp_v1` (`SessionNotification`) and `acp_v2_draft` (`UpdateSessionNotification`),
- the PyPI `agent-client-protocol` package (`acp.schema.SessionNotification`) on the v1 payloads,
- `plain pydantic (v2)`: what `datamodel-codegen` makes of the same draft schema with no options
  (plain pydantic models, unknown fields dropped, unions tried left to right), generated into a
  temporary directory at start: the engine's own cost for models of this shape, the target of
  the generated classes (outbound goal: within 1.25x of it).

Inbound is `bytes -> model` (the class's `model_validate_json`, which `from_json()` is), outbound
is `model -> bytes` (the class serializer's `to_json(by_alias=True, exclude_unset=True)`, which
`to_json()` is before decoding), the same calls for every typed contender. The two
`(TypeAdapter)` rows make the same round trip through a `TypeAdapter`, whose per-call overhead
(~0.3-0.5 us) both packages pay equally. `acp_v2_draft (full path)` parses with the class's full validator
only (the generated classes first try a hook-free fast path; see `_fastschema.py`), to show what the
fast path buys. Every payload is round-tripped by every contender before timing (same JSON value
back, or the run stops). Every contender runs in each round, in alternating order, with the
garbage collector paused while it runs (as `timeit` does); the report shows medians over rounds.
On a shared machine the absolute numbers move a lot; the ratios within one run are what count.

    python bench/throughput.py [--messages 50000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

SESSION = "sess_7f3a9c2e41b84d0e9a6b5c1d"
WORDS = [
    "the",
    "agent",
    "reads",
    "the",
    "file",
    "and",
    "proposes",
    "a",
    "minimal",
    "patch",
    "that",
    "keeps",
    "the",
    "public",
    "api",
    "stable",
    "while",
    "fixing",
    "the",
    "off",
    "by",
    "one",
    "error",
    "in",
    "the",
    "pagination",
    "helper",
    "then",
    "runs",
    "the",
    "test",
    "suite",
    "again",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _message_chunk(rng: random.Random, i: int, v1: bool) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": f"msg_{i // 20:08d}",
        "content": {"type": "text", "text": _text(rng, 38)},
    }
    return {"sessionId": SESSION, "update": update}


def _tool_call_update(rng: random.Random, i: int, v1: bool) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": f"call_{i // 5:06d}",
        "status": rng.choice(["in_progress", "completed"]),
        "title": "Read src/pagination.py",
        "kind": "read",
        "content": [{"type": "content", "content": {"type": "text", "text": _text(rng, 18)}}],
        "locations": [
            {"path": "/home/user/project/src/pagination.py", "line": rng.randint(1, 400)}
        ],
    }
    return {"sessionId": SESSION, "update": update}


def _plan_update(rng: random.Random, i: int, v1: bool) -> dict[str, Any]:
    entries = [
        {"content": _text(rng, 5), "priority": p, "status": s}
        for p, s in (("high", "completed"), ("medium", "in_progress"), ("low", "pending"))
    ]
    if v1:
        update: dict[str, Any] = {"sessionUpdate": "plan", "entries": entries}
    else:
        update = {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "plan_1", "entries": entries},
        }
    return {"sessionId": SESSION, "update": update}


def _state_update(rng: random.Random, i: int, v1: bool) -> dict[str, Any]:
    if v1:  # v1 has no state updates: its closest end-of-turn report is a usage update
        update: dict[str, Any] = {
            "sessionUpdate": "usage_update",
            "used": rng.randint(1000, 90000),
            "size": 200000,
            "cost": {"amount": round(rng.random(), 4), "currency": "USD"},
        }
    else:
        update = {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "end_turn",
            "usage": {
                "totalTokens": 5210,
                "inputTokens": 4800,
                "outputTokens": 410,
                "cachedReadTokens": 3900,
            },
        }
    return {"sessionId": SESSION, "update": update}


# (weight, builder): mostly streamed chunks, as in a real session.
MIX: tuple[tuple[int, Callable[[random.Random, int, bool], dict[str, Any]]], ...] = (
    (55, _message_chunk),
    (25, _tool_call_update),
    (10, _plan_update),
    (10, _state_update),
)


def payloads(n: int, *, v1: bool, seed: int = 7) -> list[bytes]:
    """`n` encoded notification params of the mix (same sequence of kinds for v1 and v2)."""
    rng = random.Random(seed)
    kinds = [b for w, b in MIX for _ in range(w)]
    return [orjson.dumps(rng.choice(kinds)(rng, i, v1)) for i in range(n)]


class Contender:
    """One way of doing bytes -> object -> bytes."""

    def __init__(
        self,
        name: str,
        load: Callable[[bytes], Any],
        dump: Callable[[Any], bytes],
        data: list[bytes],
    ) -> None:
        self.name, self.load, self.dump, self.data = name, load, dump, data
        self.inbound: list[float] = []
        self.outbound: list[float] = []

    def check(self) -> None:
        """Every message must survive the round trip as the same JSON value."""
        for raw in self.data:
            again = self.dump(self.load(raw))
            if orjson.loads(again) != orjson.loads(raw):
                raise SystemExit(f"{self.name}: round trip changed\n  {raw!r}\n  {again!r}")

    def run(self) -> None:
        load, dump, data = self.load, self.dump, self.data
        gc.collect()
        gc.disable()  # as `timeit` does: collector pauses would land on whoever runs next
        try:
            t0 = time.perf_counter()
            objs = [load(raw) for raw in data]
            t1 = time.perf_counter()
            for obj in objs:
                dump(obj)
            t2 = time.perf_counter()
        finally:
            gc.enable()
        self.inbound.append(t1 - t0)
        self.outbound.append(t2 - t1)


def typed(name: str, model: Any, data: list[bytes], *, adapter: bool = False) -> Contender:
    """A model class's own calls (`model_validate_json`, its serializer's `to_json`), or with
    `adapter` the same through a `TypeAdapter` (what a union type, which has no class, needs)."""
    if adapter:
        ta = TypeAdapter(model)
        return Contender(
            name,
            ta.validate_json,
            lambda obj: ta.dump_json(obj, by_alias=True, exclude_unset=True),
            data,
        )
    serializer = model.__pydantic_serializer__

    def dump(obj: Any) -> bytes:
        return serializer.to_json(obj, by_alias=True, exclude_unset=True)  # type: ignore[no-any-return]

    return Contender(name, model.model_validate_json, dump, data)


def plain_model(directory: Path) -> Any:
    """`UpdateSessionNotification` of plain `datamodel-codegen` output for the pinned draft schema."""
    import datamodel_code_generator as dmcg

    from acp_codegen.pins import default_pin_path, load_pins
    from acp_codegen.sources import default_cache_dir, default_shared_dir, fetch, parse_source

    pin = load_pins(default_pin_path()).default_pin  # the schema acp_v2_draft is built from
    schema = fetch(
        parse_source(pin.source),
        expected_sha256=pin.sha256,
        cache_dir=default_cache_dir(),
        shared_dir=default_shared_dir(),
    )
    out = directory / "plain_draft.py"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dmcg.generate(
            schema.data.decode("utf-8"),
            input_file_type=dmcg.InputFileType.JsonSchema,
            output_model_type=dmcg.DataModelType.PydanticV2BaseModel,
            output=out,
        )
    spec = importlib.util.spec_from_file_location("plain_draft", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["plain_draft"] = module
    spec.loader.exec_module(module)
    return module.UpdateSessionNotification


def contenders(n: int) -> list[Contender]:
    import acp.schema as pypi
    import acp_v1
    import acp_v2_draft

    v1 = payloads(n, v1=True)
    v2 = payloads(n, v1=False)
    with tempfile.TemporaryDirectory(prefix="acp-plain-") as tmp:
        plain = plain_model(Path(tmp))
    draft = typed("acp_v2_draft", acp_v2_draft.UpdateSessionNotification, v2)
    full = acp_v2_draft.UpdateSessionNotification.__pydantic_validator__.full
    out = [
        Contender("orjson v1 (floor)", orjson.loads, orjson.dumps, v1),
        Contender("orjson v2 (floor)", orjson.loads, orjson.dumps, v2),
        typed("acp_v1", acp_v1.SessionNotification, v1),
        draft,
        Contender("acp_v2_draft (full path)", full.validate_json, draft.dump, v2),
        typed("pypi acp (v1)", pypi.SessionNotification, v1),
        typed("plain pydantic (v2)", plain, v2),
        typed("acp_v1 (TypeAdapter)", acp_v1.SessionNotification, v1, adapter=True),
        typed("pypi acp (TypeAdapter)", pypi.SessionNotification, v1, adapter=True),
    ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)

    runs = contenders(args.messages)
    sizes = {c.name: statistics.mean(map(len, c.data)) for c in runs}
    for c in runs:
        c.check()
    for r in range(args.rounds):
        order = runs if r % 2 == 0 else runs[::-1]
        for c in order:
            c.run()
    n = args.messages
    med = {c.name: (statistics.median(c.inbound), statistics.median(c.outbound)) for c in runs}
    print(
        f"{n} messages, {args.rounds} rounds, medians; mean size v1 {sizes['acp_v1']:.0f} B, v2 {sizes['acp_v2_draft']:.0f} B"
    )
    print(
        f"{'contender':<26} {'in us/msg':>10} {'out us/msg':>11} {'in msg/s':>10} {'out msg/s':>10}"
    )
    for c in runs:
        i, o = med[c.name]
        print(
            f"{c.name:<26} {i / n * 1e6:>10.2f} {o / n * 1e6:>11.2f} {n / i:>10.0f} {n / o:>10.0f}"
        )
    print()
    floors = {
        "acp_v1": "orjson v1 (floor)",
        "acp_v2_draft": "orjson v2 (floor)",
        "acp_v2_draft (full path)": "orjson v2 (floor)",
        "pypi acp (v1)": "orjson v1 (floor)",
    }
    for name, floor in floors.items():
        i, o = med[name]
        fi, fo = med[floor]
        print(
            f"{name:<26} inbound {i / fi:5.2f}x floor (goal <= 3), outbound {o / fo:5.2f}x floor (goal <= 4)"
        )
    pi, po = med["pypi acp (v1)"]
    for name in ("acp_v1", "acp_v2_draft"):
        i, o = med[name]
        print(
            f"{name:<26} vs pypi acp: inbound {pi / i:5.2f}x, outbound {po / o:5.2f}x, "
            f"round trip {(pi + po) / (i + o):5.2f}x its throughput (goal >= 2)"
        )
    li, lo = med["plain pydantic (v2)"]
    di, do = med["acp_v2_draft"]
    print(
        f"{'acp_v2_draft':<26} vs plain pydantic: inbound {di / li:5.2f}x its time, "
        f"outbound {do / lo:5.2f}x its time (goal <= 1.25)"
    )
    fi, _ = med["acp_v2_draft (full path)"]
    print(
        f"{'acp_v2_draft':<26} fast path: inbound {fi / med['acp_v2_draft'][0]:5.2f}x the full path's throughput"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
