"""Benchmark: a full `acp-codegen generate` of the draft target against plain `datamodel-codegen`.

Both tools run as subprocesses (interpreter start-up and imports included on both sides), on the
same schema file, in alternating order, each into a fresh output directory:

- ours, cold:  `python -m acp_codegen generate acp_v2_draft` into an empty directory (every file
               written)
- ours, warm:  the same into a directory it is up to date in (every file read and compared,
               none written). acp-codegen keeps no cache of its own: both runs do every stage.
- theirs:      `datamodel-codegen --input SCHEMA --input-file-type jsonschema --output FILE`
               (the same figure is compared against both of ours)

The schema is `npm-2.4.0/schema.unstable.json` of the shared directory, else the cached pinned
file. Ours reads the pinned source through a private, pre-filled cache, so no run touches the
network. Prints per-tool medians, the ratio of medians and the median of per-round ratios
(goals: cold <= 0.75, warm <= 0.2). `--stages` adds an in-process breakdown of one cold generate.

    python bench/generate.py [--rounds 7] [--stages] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp_codegen.pins import default_pin_path, load_pins
from acp_codegen.sources import default_cache_dir, default_shared_dir


def schema_file(sha256: str) -> Path:
    """The draft schema: from the shared directory, else from the source cache."""
    shared = default_shared_dir() / "npm-2.4.0" / "schema.unstable.json"
    if shared.is_file():
        return shared
    cached = default_cache_dir() / sha256
    if cached.is_file():
        return cached
    sys.exit(f"no draft schema: neither {shared} nor {cached} exists (run `acp-codegen pull`)")


CPU: dict[str, list[float]] = {}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str], what: str = "") -> float:
    """Wall seconds of one run; its CPU seconds (worker processes included) go to CPU[what]."""
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    CPU.setdefault(what, []).append(_cpu() - cpu)
    return seconds


def stages(target: str, work: Path) -> dict[str, float]:
    """One cold generate, in process, stage by stage (seconds)."""
    from acp_codegen.fmt import format_files
    from acp_codegen.pipeline import build_ir, load, package_dir, pinned_targets
    from acp_codegen.render.package import render_package
    from acp_codegen.write import write_package

    (chosen,) = pinned_targets(load_pins(default_pin_path()), [target])
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    loaded = load(chosen.source, chosen.sha256)
    t1 = time.perf_counter()
    protocol = build_ir(loaded)
    t2 = time.perf_counter()
    files = render_package(protocol, chosen.package, chosen.regenerate)
    t3 = time.perf_counter()
    formatted = format_files(files)
    t4 = time.perf_counter()
    write_package(formatted, package_dir(work / "stages", chosen.package))
    t5 = time.perf_counter()
    out.update(load=t1 - t0, resolve_ir=t2 - t1, render=t3 - t2, format=t4 - t3, write=t5 - t4)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (default 7)")
    parser.add_argument(
        "--stages", action="store_true", help="also time the stages of one cold generate"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    pins = load_pins(default_pin_path())
    draft = pins.get("acp_v2_draft") or pins.default_pin
    schema = schema_file(draft.sha256)
    dmc = shutil.which("datamodel-codegen") or str(
        Path(sys.executable).with_name("datamodel-codegen")
    )
    if not Path(dmc).is_file():
        sys.exit("datamodel-codegen is not installed")

    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        work = Path(tmp)
        cache = work / "cache"
        cache.mkdir()
        shutil.copyfile(schema, cache / draft.sha256)  # the pinned source, so nothing is fetched
        env = {**os.environ, "ACP_CODEGEN_CACHE": str(cache), "PYTHONWARNINGS": "ignore"}
        ours = [sys.executable, "-m", "acp_codegen", "generate", draft.name, "--quiet"]
        runs = 0

        def fresh(name: str) -> Path:
            nonlocal runs
            runs += 1
            return work / f"{name}-{runs}"

        up_to_date = fresh("warm")
        timed([*ours, "--out", str(up_to_date)], env)  # the tree the warm runs find up to date
        cold: list[float] = []
        warm: list[float] = []
        theirs: list[float] = []
        for round_ in range(args.rounds):
            order = ["cold", "theirs", "warm"] if round_ % 2 == 0 else ["warm", "theirs", "cold"]
            for what in order:
                if what == "theirs":
                    out = fresh("dmc")
                    out.mkdir()
                    theirs.append(
                        timed(
                            [
                                dmc,
                                "--input",
                                str(schema),
                                "--input-file-type",
                                "jsonschema",
                                "--output",
                                str(out / "models.py"),
                            ],
                            env,
                            "datamodel_codegen",
                        )
                    )
                elif what == "cold":
                    cold.append(timed([*ours, "--out", str(fresh("cold"))], env, "ours_cold"))
                else:
                    warm.append(timed([*ours, "--out", str(up_to_date)], env, "ours_warm"))
        breakdown = stages(draft.name, work) if args.stages else None

    med = {
        "ours_cold": statistics.median(cold),
        "ours_warm": statistics.median(warm),
        "datamodel_codegen": statistics.median(theirs),
    }
    result = {
        "schema": str(schema),
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "medians_s": med,
        "ratio_cold": med["ours_cold"] / med["datamodel_codegen"],
        "ratio_warm": med["ours_warm"] / med["datamodel_codegen"],
        "paired_ratio_cold": statistics.median(c / t for c, t in zip(cold, theirs, strict=True)),
        "paired_ratio_warm": statistics.median(w / t for w, t in zip(warm, theirs, strict=True)),
        "runs_s": {"ours_cold": cold, "ours_warm": warm, "datamodel_codegen": theirs},
        "cpu_medians_s": {k: statistics.median(v) for k, v in CPU.items() if k},
        "load_average": os.getloadavg(),
    }
    if breakdown is not None:
        result["stages_cold_in_process_s"] = breakdown
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"schema: {schema}  ({args.rounds} alternating rounds, {os.cpu_count()} CPUs, all subprocesses)"
    )
    cpu = result["cpu_medians_s"]
    print(
        f"  acp-codegen generate, cold (all written): median {med['ours_cold']:.2f}s wall, {cpu['ours_cold']:.2f}s CPU"
    )
    print(
        f"  acp-codegen generate, warm (up to date) : median {med['ours_warm']:.2f}s wall, {cpu['ours_warm']:.2f}s CPU"
    )
    print(
        f"  datamodel-codegen                      : median {med['datamodel_codegen']:.2f}s wall, {cpu['datamodel_codegen']:.2f}s CPU"
    )
    print(
        f"  ratio cold: {result['ratio_cold']:.2f} (paired {result['paired_ratio_cold']:.2f})"
        f"   ratio warm: {result['ratio_warm']:.2f} (paired {result['paired_ratio_warm']:.2f})"
        f"   goals: cold <= 0.75 ({'met' if result['ratio_cold'] <= 0.75 else 'NOT met'}),"
        f" warm <= 0.2 ({'met' if result['ratio_warm'] <= 0.2 else 'NOT met'})"
    )
    print(
        f"  load average at the end: {' '.join(f'{x:.2f}' for x in result['load_average'])}"
        " (other work on the machine inflates wall times)"
    )
    if breakdown is not None:
        parts = ", ".join(f"{k} {v:.2f}s" for k, v in breakdown.items())
        print(f"  one cold generate in process: {parts}")


if __name__ == "__main__":
    main()
