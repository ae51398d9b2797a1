"""Speed of `acp-codegen diff` against one generation, measured in the same run.

The diff compares the two newest revisions of the pinned draft target (its last `history`
entry and its current source); the generation renders and formats that target's current
package (`acp_codegen.pipeline.render_target`, nothing written, caches off so the rendering and formatting
really runs). Each is timed over several rounds; the report shows the median and the ratio.

    python bench/diff.py [--rounds 5] [--target acp_v2_draft]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp_codegen.diff.compare import diff_protocols
from acp_codegen.pins import default_pin_path, load_pins
from acp_codegen.pipeline import Target, build_ir, load, render_target


def _median(action: Callable[[], object], rounds: int) -> float:
    times: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """Time the diff (load + IR of both sides, and the comparison alone) and one generation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--target", default="acp_v2_draft")
    args = parser.parse_args()
    pin = load_pins(default_pin_path()).get(args.target)
    if pin is None or not pin.history:
        raise SystemExit(f"pinned target {args.target!r} with a history is required")
    old, new = pin.history[-1], pin.pinned
    load(old.source, old.sha256), load(new.source, new.sha256)  # warm the fetch cache

    def full_diff() -> int:
        """Load and build both IRs, then compare them."""
        a = build_ir(load(old.source, old.sha256))
        b = build_ir(load(new.source, new.sha256))
        return len(diff_protocols(a, b))

    old_ir, new_ir = build_ir(load(old.source, old.sha256)), build_ir(load(new.source, new.sha256))
    changes = len(diff_protocols(old_ir, new_ir))
    compare = _median(lambda: diff_protocols(old_ir, new_ir), args.rounds)
    diff_total = _median(full_diff, args.rounds)
    target = Target.from_pin(pin)
    generation = _median(lambda: render_target(target), args.rounds)

    print(f"diff {old.source}\n  -> {new.source}: {changes} changes")
    print(f"  compare two IRs          {compare * 1000:8.1f} ms (median of {args.rounds})")
    print(f"  load + IR x2 + compare   {diff_total * 1000:8.1f} ms")
    print(f"generation of {target.package} (render + black, no cache)")
    print(f"  render_target            {generation * 1000:8.1f} ms")
    print(f"diff / generation          {diff_total / generation:8.1%}")


if __name__ == "__main__":
    main()
