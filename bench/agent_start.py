"""Start-up of a scaffolded agent that serves ACP v1 and v2: import time and time to `initialize`.

The agents are projects made by `acp-codegen scaffold agent DIR` (by one or more checkouts of this
toolkit, for a before/after comparison), each installed as its README says, in its own `DIR/.venv`
(`python3 -m venv .venv && .venv/bin/pip install -e '.[test]'`). The baseline, measured in the
same run, is the PyPI `agent-client-protocol` package's echo agent (`acp.run_agent`, the agent of
`bench/startup.py`) on this interpreter. Figures, each a fresh process spawned by this one:

- `import`: `DIR/.venv/bin/python -c "import PKG.agent"` (the module of the agent's console
  script: its version router and the bindings of both versions), wall time to exit, the child's CPU
  time and its peak RSS (`VmHWM`, read as it exits); for the baseline `import acp`;
- `initialize v1` / `initialize v2`: `DIR/.venv/bin/python -m PKG` with an `initialize` request
  for protocol version 1 / 2 written at once, wall time to the answer line and the agent's CPU time
  to its exit (it exits at end of input); for the baseline its v1 `initialize`.

Each project is byte-compiled first (`compileall`, skipping `.venv`), as an installed wheel would
be: an editable install leaves no `.pyc`, and with `PYTHONDONTWRITEBYTECODE` set the agent would
pay the compiler at every start. Every round runs every contender once per figure, in alternating
order (ABBA); the table shows medians, the spread (min-max), the ratio of medians to the baseline,
and for each agent after the first the median of its per-round ratios to the first agent.

    python bench/agent_start.py --agent before=/tmp/agent-before --agent after=/tmp/agent-after
                                [--rounds 9]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# the same PyPI echo agent as bench/startup.py's baseline (this directory is on sys.path when run)
from startup import PACKAGE_AGENT

BASELINE = "pypi acp"

INITIALIZE = {
    1: {
        "protocolVersion": 1,
        "clientCapabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
    2: {"protocolVersion": 2, "info": {"name": "bench", "version": "1.0"}},
}

# Appended to each `python -c`: the child's own peak RSS, in KiB, on its stdout.
_PEAK_RSS = (
    "\nimport sys\nfor _l in open('/proc/self/status'):\n"
    "    if _l.startswith('VmHWM:'): sys.stdout.write(_l.split()[1])\n"
)

Sample = tuple[float, ...]


def _request(version: int) -> bytes:
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE[version]}
    return (json.dumps(message) + "\n").encode()


def _reap(process: subprocess.Popen[bytes]) -> float:
    """Wait for `process`; its CPU seconds (user + system) as the kernel accounted them."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def run_import(python: str, module: str) -> Sample:
    """Wall seconds, CPU seconds and peak RSS (KiB) of `python -c "import module"`."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [python, "-c", f"import {module}" + _PEAK_RSS], stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    out = process.stdout.read()
    elapsed = time.perf_counter() - start
    cpu = _reap(process)
    if process.returncode != 0:
        raise SystemExit(f"{python} -c 'import {module}' exited with {process.returncode}")
    return elapsed, cpu, float(int(out))


def run_initialize(command: list[str], version: int) -> Sample:
    """Wall seconds from spawning `command` to its `initialize` answer, and its CPU seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_request(version))
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    answer = json.loads(line) if line else {}
    if "result" not in answer:
        process.kill()
        raise SystemExit(f"{' '.join(command)} answered initialize v{version} with {line!r}")
    process.stdin.close()  # an agent ends at end of input
    process.stdout.read()
    return elapsed, _reap(process)


def _package(project: Path) -> str:
    """The import package of a scaffolded project (the directory holding `agent.py`)."""
    found = [p.parent.name for p in project.glob("*/agent.py")]
    if len(found) != 1:
        raise SystemExit(f"{project}: expected one <package>/agent.py, found {found}")
    return found[0]


def contenders(
    agents: list[tuple[str, Path]], work: Path
) -> dict[str, dict[str, Callable[[], Sample]]]:
    """For each contender, its figures as callables that each measure one fresh process."""
    script = work / "pypi_agent.py"
    script.write_text(PACKAGE_AGENT)
    out: dict[str, dict[str, Callable[[], Sample]]] = {
        BASELINE: {
            "import": lambda: run_import(sys.executable, "acp"),
            "initialize v1": lambda: run_initialize([sys.executable, str(script)], 1),
        }
    }
    for name, project in agents:
        python = str(project / ".venv" / "bin" / "python")
        package = _package(project)
        subprocess.run(
            [python, "-m", "compileall", "-q", "-x", r"[/\\]\.venv", str(project)], check=True
        )
        command = [python, "-m", package]
        out[name] = {
            "import": functools.partial(run_import, python, f"{package}.agent"),
            "initialize v1": functools.partial(run_initialize, command, 1),
            "initialize v2": functools.partial(run_initialize, command, 2),
        }
    return out


def measure(
    jobs: dict[str, dict[str, Callable[[], Sample]]], rounds: int
) -> dict[str, dict[str, list[Sample]]]:
    """Every figure of every contender once per round, the order reversed every other round."""
    results: dict[str, dict[str, list[Sample]]] = {
        name: {figure: [] for figure in figures} for name, figures in jobs.items()
    }
    order = [(name, figure) for name, figures in jobs.items() for figure in figures]
    for n in range(rounds):
        for name, figure in order if n % 2 == 0 else reversed(order):
            results[name][figure].append(jobs[name][figure]())
        print(f"round {n + 1}/{rounds} done", file=sys.stderr, flush=True)
    return results


def _stats(values: list[float]) -> str:
    return f"({min(values):.1f}-{max(values):.1f})"


def report(results: dict[str, dict[str, list[Sample]]], names: list[str]) -> None:
    """The table: medians, spread, ratio of medians to the baseline and the first agent's."""
    base = results[BASELINE]
    first = names[0]
    columns = [
        ("wall", 0, 1000.0, "ms"),
        ("CPU", 1, 1000.0, "ms"),
        ("peak RSS", 2, 1 / 1024, "MiB"),
    ]
    for figure in ("import", "initialize v1", "initialize v2"):
        for label, index, scale, unit in columns:
            if index == 2 and figure != "import":
                continue
            print(f"{figure}, {label}")
            base_figure = base.get(figure, base["initialize v1"])
            base_median = statistics.median(s[index] for s in base_figure)
            for name, figures in results.items():
                if figure not in figures:
                    continue
                values = [s[index] * scale for s in figures[figure]]
                med = statistics.median(values)
                line = f"  {name:<10} {med:9.1f} {unit} {_stats(values):<17}"
                line += f" {med / (base_median * scale):5.2f}x {BASELINE}"
                if name not in (BASELINE, first):
                    paired = statistics.median(
                        a[index] / b[index]
                        for a, b in zip(figures[figure], results[first][figure], strict=True)
                    )
                    line += f"  {paired:5.2f}x {first} (per-round)"
                print(line)
    if "initialize v2" not in base:
        print(f"({BASELINE} speaks v1 only: its v1 initialize is the baseline of both)")


def main() -> None:
    """Parse the arguments, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--agent",
        action="append",
        required=True,
        metavar="NAME=DIR",
        help="a scaffolded, installed agent project (repeatable; the first is the reference)",
    )
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    agents = []
    for spec in args.agent:
        name, sep, path = spec.partition("=")
        if not sep or not (Path(path) / ".venv" / "bin" / "python").exists():
            raise SystemExit(f"--agent {spec}: expected NAME=DIR with DIR/.venv/bin/python")
        agents.append((name, Path(path).resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = contenders(agents, Path(tmp))
        results = measure(jobs, args.rounds)
    print(
        f"Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; {args.rounds} rounds; "
        f"medians (min-max); ratio of medians vs {BASELINE}"
    )
    report(results, [name for name, _ in agents])


if __name__ == "__main__":
    main()
