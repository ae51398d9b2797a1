"""Generated models against `jsonschema` (Draft 2020-12) on every definition of every schema file:
the three pinned targets (the committed packages) and every revision in the shared directory
(rendered for the test). See `models_differential.py` for what is checked per instance.

All files are checked up front in worker processes (one per CPU); each file is then one test.
Instances are deterministic (seeded by definition and index), so a failure reproduces.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from models_differential import Report, check_file
from models_facts import PINNED, schema_files

# Valid instances generated per `$defs` entry, and mutants derived from each of them.
PINNED_INSTANCES_PER_DEFINITION = 10
PINNED_MUTANTS_PER_INSTANCE = 3
HISTORY_INSTANCES_PER_DEFINITION = 2
HISTORY_MUTANTS_PER_INSTANCE = 2

FILES: list[tuple[str, Path]] = [
    (f"pinned:{pkg}", path) for pkg, path in sorted(PINNED.items())
] + [(label, path) for label, path in schema_files() if path not in PINNED.values()]


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    jobs = []
    with ProcessPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for label, path in FILES:
            pinned = label.startswith("pinned:")
            jobs.append(
                (
                    label,
                    pool.submit(
                        check_file,
                        label,
                        str(path),
                        (
                            PINNED_INSTANCES_PER_DEFINITION
                            if pinned
                            else HISTORY_INSTANCES_PER_DEFINITION
                        ),
                        PINNED_MUTANTS_PER_INSTANCE if pinned else HISTORY_MUTANTS_PER_INSTANCE,
                    ),
                )
            )
        out = {label: job.result() for label, job in jobs}
    print(
        "\ndifferential check (instances per definition, definitions, instances, mutants: rejected by both / valid / accepted by leniency)"
    )
    for label, r in out.items():
        print(
            f"  {label:40s} {r.per_definition:3d}/def {r.definitions:4d} defs {r.instances:6d} instances "
            f"{r.mutants:6d} mutants: {r.mutants_rejected_by_both} / {r.mutants_valid} / {r.lenient_accepts}; "
            f"fast vs full compared {r.fast_full_compared} on {r.fast_path_classes} classes; "
            f"serializers compared {r.serializers_compared}"
        )
    return out


def test_all_schema_files_are_covered() -> None:
    assert len(FILES) == 27  # 12 revisions; the three pinned files are among them, checked once
    assert len({path for _, path in FILES}) == len(FILES)


@pytest.mark.parametrize("label", [label for label, _ in FILES])
def test_models_agree_with_jsonschema(label: str, reports: dict[str, Report]) -> None:
    report = reports[label]
    assert not report.failures, "\n\n".join(report.failures)
    assert not report.no_instance, f"no valid instance generated for {report.no_instance}"
    assert report.instances == report.definitions * report.per_definition
    # the mutants must exercise every verdict, or the check proves less than it seems
    assert report.mutants_rejected_by_both > report.definitions
    assert report.mutants_valid > 0 and report.lenient_accepts > 0
    if label.startswith("pinned:"):
        assert report.fast_path_classes > 100 and report.fast_full_compared > report.instances
    assert report.serializers_compared > report.instances
