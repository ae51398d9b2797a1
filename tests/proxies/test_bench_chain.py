"""bench/chain.py, smoke-sized: every chain it measures (direct, the conductor alone, 1 and 3
proxies of each kind) runs over real pipes, passes every update (the script checks the count), and
the report gives each chain's ratios and each kind of hop's cost. The real runs are `nox -s bench`
(docs/proxies.md "Cost")."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from chain_support import ROOT, chain_env

pytestmark = pytest.mark.timeout(180)


def test_the_chain_benchmark_measures_every_chain_and_every_kind_of_hop() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "chain.py"), "--rounds=1", "--requests=10"]
        + ["--updates=50"],
        cwd=ROOT / "bench",
        env=chain_env(),
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {
        line[:36].strip(): line[36:].split()
        for line in done.stdout.splitlines()
        if line.startswith(("direct", "conductor"))
    }
    kinds = ("proxy process", "proxy inside it", "bare proxy process")
    expected = ["direct", "conductor, no proxy", *(f"conductor + 1 {kind}" for kind in kinds)]
    expected += [
        "conductor + 3 proxy processes",
        "conductor + 3 proxies inside it",
        "conductor + 3 bare proxy processes",
    ]
    assert sorted(name for name in rows if len(rows[name]) == 8) == sorted(expected), done.stdout
    assert rows["direct"][1] == "1.00" and rows["direct"][5] == "1.00"  # the baseline is itself
    for kind in kinds:  # a hop's cost, as a fraction of a direct round trip and update
        hop = re.search(rf"one hop, {kind}: (-?[\d.]+)x .* (-?[\d.]+)x \(CPU", done.stdout)
        assert hop is not None, done.stdout
    assert re.search(r"pipe ping-pong: \d+ us a round trip", done.stdout), done.stdout
