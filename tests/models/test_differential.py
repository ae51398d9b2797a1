"""Generated models against `jsonschema` (Draft 2020-12) on every definition of every schema file:
the three pinned targets (the committed packages) and every revision in the shared directory
(rendered for the test). See `models_differential.py` for what is checked per instance.

Each file is one test (xdist spreads them over the CPUs). The README's test command checks the
pinned targets and the oldest and newest other revisions; the revisions between them run in
`nox -s slow` (each takes seconds of CPU, and together they were a tenth of the suite's time).
Instances are deterministic (seeded by definition and index), so a failure reproduces.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from models_differential import Report, check_file
from models_facts import PINNED, schema_files

# Valid instances generated per `$defs` entry, and mutants derived from each of them.
PINNED_INSTANCES_PER_DEFINITION = 10
PINNED_MUTANTS_PER_INSTANCE = 3
HISTORY_INSTANCES_PER_DEFINITION = 2
HISTORY_MUTANTS_PER_INSTANCE = 2

PINNED_FILES: list[tuple[str, Path]] = [
    (f"pinned:{pkg}", path) for pkg, path in sorted(PINNED.items())
]
HISTORY_FILES: list[tuple[str, Path]] = [
    (label, path) for label, path in schema_files() if path not in PINNED.values()
]
FILES = PINNED_FILES + HISTORY_FILES


def _param(index: int, label: str) -> object:
    between = 0 < index < len(HISTORY_FILES) - 1
    return pytest.param(label, marks=[pytest.mark.slow] if between else [], id=label)


def _report(label: str) -> Report:
    path = dict(FILES)[label]
    pinned = label.startswith("pinned:")
    report = check_file(
        label,
        str(path),
        PINNED_INSTANCES_PER_DEFINITION if pinned else HISTORY_INSTANCES_PER_DEFINITION,
        PINNED_MUTANTS_PER_INSTANCE if pinned else HISTORY_MUTANTS_PER_INSTANCE,
    )
    print(
        f"\n{label}: {report.per_definition}/def {report.definitions} defs {report.instances}"
        f" instances {report.mutants} mutants: {report.mutants_rejected_by_both} rejected by"
        f" both / {report.mutants_valid} valid / {report.lenient_accepts} accepted by leniency;"
        f" fast vs full compared {report.fast_full_compared} on {report.fast_path_classes}"
        f" classes; serializers compared {report.serializers_compared}"
    )
    return report


def test_all_schema_files_are_covered() -> None:
    assert len(FILES) == 27  # 12 revisions; the three pinned files are among them, checked once
    assert len({path for _, path in FILES}) == len(FILES)


@pytest.mark.parametrize(
    "label",
    [label for label, _ in PINNED_FILES]
    + [_param(index, label) for index, (label, _) in enumerate(HISTORY_FILES)],
)
def test_models_agree_with_jsonschema(label: str) -> None:
    report = _report(label)
    assert not report.failures, "\n\n".join(report.failures)
    assert not report.no_instance, f"no valid instance generated for {report.no_instance}"
    assert report.instances == report.definitions * report.per_definition
    # the mutants must exercise every verdict, or the check proves less than it seems
    assert report.mutants_rejected_by_both > report.definitions
    assert report.mutants_valid > 0 and report.lenient_accepts > 0
    if label.startswith("pinned:"):
        assert report.fast_path_classes > 100 and report.fast_full_compared > report.instances
    assert report.serializers_compared > report.instances
