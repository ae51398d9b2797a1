"""Differential check of generated models against `jsonschema` (Draft 2020-12), one schema file
at a time (run in worker processes by `test_differential.py`).

For every `$defs` entry: valid instances (see `models_instances.py`) must validate with `jsonschema`,
parse with the generated model (`pydantic.TypeAdapter(getattr(package, Name))`, from JSON text
and from Python data) and come back exactly (`same_json`) from
`adapter.dump_json(value, by_alias=True, exclude_unset=True)`. Mutants of them: when
`jsonschema` accepts one, so must the model (and round-trip it); when `jsonschema` rejects one,
the model must reject it too unless a leniency hint on the mutated path explains the acceptance,
and what the model then writes must be valid.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models_facts import GENERATED, PINNED, load
from models_instances import NONE, Instances, Leniency, mutants, same_json
from models_serializers import differences
from pydantic import BaseModel, TypeAdapter, ValidationError


@dataclass
class Report:
    """What checking one schema file found."""

    label: str
    package: str
    definitions: int = 0
    instances: int = 0
    per_definition: int = 0
    no_instance: list[str] = field(default_factory=list)
    mutants: int = 0
    mutants_rejected_by_both: int = 0
    mutants_valid: int = 0
    lenient_accepts: int = 0
    fast_path_classes: int = 0
    fast_full_compared: int = 0
    serializers_compared: int = 0
    failures: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        if len(self.failures) < 40:
            self.failures.append(message)


def package_for(label: str, path: Path, out_dir: Path) -> tuple[Any, Any]:
    """(generated package, IR) for a schema file: the committed one for a pinned target, else one
    rendered now (unformatted: formatting does not change behaviour) into `out_dir`."""
    from acp_codegen.pipeline import ir_for
    from acp_codegen.render.package import render_package

    protocol = ir_for(str(path))
    for package, pinned in PINNED.items():
        if pinned == path:
            if str(GENERATED) not in sys.path:
                sys.path.insert(0, str(GENERATED))
            return importlib.import_module(package), protocol
    package = "mrev_" + "".join(c if c.isalnum() else "_" for c in label).lower()
    target = out_dir / package
    target.mkdir(parents=True, exist_ok=True)
    for name, text in render_package(protocol, package, f"acp-codegen generate {package}").items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text, encoding="utf-8")
    if str(out_dir) not in sys.path:
        sys.path.insert(0, str(out_dir))
    return importlib.import_module(package), protocol


def check_file(label: str, path: str, per_definition: int, mutants_per_instance: int) -> Report:
    """Run the differential check on one schema file."""
    # The package of a non-pinned revision is rendered into a directory removed afterwards (the
    # suite used to leave one per revision and test process in the temp directory).
    with tempfile.TemporaryDirectory(prefix="acp-models-") as out:
        return _check_in(label, path, per_definition, mutants_per_instance, Path(out))


def _check_in(
    label: str, path: str, per_definition: int, mutants_per_instance: int, out_dir: Path
) -> Report:
    package, protocol = package_for(label, Path(path), out_dir)
    doc = load(Path(path))
    report = Report(label, package.__name__, per_definition=per_definition)
    inst = Instances(doc)
    lenient = Leniency(inst)
    for key in doc["$defs"]:
        report.definitions += 1
        definition = protocol.by_def_name(key)
        if definition is None or not hasattr(package, definition.name):
            report.fail(f"{key}: no generated definition")
            continue
        target = getattr(package, definition.name)
        # Classes build at first use; a TypeAdapter made before that builds a validator of its own.
        getattr(target, "__pydantic_validator__", None)
        adapter: TypeAdapter[Any] = TypeAdapter(target)
        fast_path = getattr(adapter.validator, "fast", None)  # a class's FastPathValidator
        full = adapter.validator.full if fast_path is not None else None
        if fast_path is not None:
            report.fast_path_classes += 1
        validator = inst.validator(key)
        made = 0
        for seed in range(per_definition):
            value = inst.valid(key, seed)
            if value is NONE:
                continue
            made += 1
            report.instances += 1
            where = f"{key} #{seed} {json.dumps(value)[:300]}"
            text = json.dumps(value)
            try:
                parsed = adapter.validate_json(text)
                from_python = adapter.validate_python(json.loads(text))
            except ValidationError as exc:
                report.fail(f"valid instance rejected: {where}\n{_short(exc)}")
                continue
            for how, obj in (("json", parsed), ("python", from_python)):
                back = json.loads(adapter.dump_json(obj, by_alias=True, exclude_unset=True))
                if not same_json(back, value):
                    report.fail(
                        f"round trip ({how}) changed {where}\n  -> {json.dumps(back)[:300]}"
                    )
                _compare_serializers(report, obj, where)
            _compare_paths(report, adapter, full, text, where)
            rng = random.Random(f"{key}:{seed}:mutants")
            for mutant in mutants(value, rng, mutants_per_instance):
                report.mutants += 1
                schema_ok = validator.is_valid(mutant.value)
                _compare_paths(
                    report, adapter, full, json.dumps(mutant.value), f"{where}\n  {mutant.note}"
                )
                try:
                    obj = adapter.validate_json(json.dumps(mutant.value))
                except ValidationError as exc:
                    if schema_ok:
                        report.fail(
                            f"valid mutant rejected: {where}\n  {mutant.note}\n{_short(exc)}"
                        )
                    else:
                        report.mutants_rejected_by_both += 1
                    continue
                back = json.loads(adapter.dump_json(obj, by_alias=True, exclude_unset=True))
                _compare_serializers(report, obj, f"{where}\n  {mutant.note}")
                if schema_ok:
                    report.mutants_valid += 1
                    if not same_json(back, mutant.value):
                        report.fail(
                            f"round trip changed valid mutant: {where}\n  {mutant.note}\n  -> {json.dumps(back)[:300]}"
                        )
                    continue
                why = lenient.explains(key, value, mutant)
                if why is None:
                    report.fail(
                        f"invalid mutant accepted without a leniency hint: {where}\n  {mutant.note}\n  -> {json.dumps(back)[:300]}"
                    )
                elif not validator.is_valid(back):
                    report.fail(
                        f"lenient repair ({why}) wrote an invalid value: {where}\n  {mutant.note}\n  -> {json.dumps(back)[:300]}"
                    )
                else:
                    report.lenient_accepts += 1
        if made == 0:
            report.no_instance.append(key)
    return report


def _compare_paths(
    report: Report, adapter: TypeAdapter[Any], full: Any, text: str, where: str
) -> None:
    """The fast-then-full validator of a class and its full path alone give the same outcome:
    both reject, or both build objects of the same classes that write the same JSON."""
    if full is None:
        return
    report.fast_full_compared += 1
    outcomes = []
    for validate in (adapter.validator.validate_json, full.validate_json):
        try:
            obj = validate(text)
        except ValidationError:
            outcomes.append(None)
            continue
        outcomes.append((_classes(obj), adapter.dump_json(obj, by_alias=True, exclude_unset=True)))
    if outcomes[0] != outcomes[1]:
        report.fail(
            f"fast path and full path differ: {where}\n  fast: {outcomes[0]}\n  full: {outcomes[1]}"
        )


def _compare_serializers(report: Report, obj: Any, where: str) -> None:
    """A parsed model's class serializer writes what pydantic's own serializer of its schema
    writes (see `models_serializers.py`), with every dump option."""
    if not isinstance(obj, BaseModel):
        return
    report.serializers_compared += 1
    for problem in differences(obj):
        report.fail(f"serializer differs from the reference: {where}\n  {problem[:600]}")


def _classes(value: Any) -> Any:
    """The classes of a parsed value, nested like the value (to compare two parses)."""
    if isinstance(value, BaseModel):
        fields = {k: _classes(v) for k, v in value.__dict__.items()}
        return (type(value).__qualname__, fields, sorted(value.__pydantic_fields_set__))
    if isinstance(value, (list, tuple)):
        return [_classes(v) for v in value]
    if isinstance(value, dict):
        return {k: _classes(v) for k, v in value.items()}
    return type(value).__qualname__


def _short(exc: ValidationError) -> str:
    return "\n".join("  " + line for line in str(exc).splitlines()[:6])
