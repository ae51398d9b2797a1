"""Rewrite the expected output of every small generator case (`tests/generator/cases/<rule>/`)
from the current code. `nox -s regen` runs it; read the `git diff` before committing.

Each case is a small schema (`schema.json`) exercising one generator rule, a `case.json` saying
which rule and which generated files show it, and `expected/`: those files as generated.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import sys
import tempfile
from pathlib import Path

CASES = Path(__file__).resolve().parent
PACKAGE = "case"


def generate(case: Path, out: Path) -> dict[str, str]:
    """The files `case.json` names, generated from the case's schema into `out` (path -> text)."""
    from acp_codegen.pipeline import Target
    from acp_codegen.pipeline import generate as run

    files = json.loads((case / "case.json").read_text(encoding="utf-8"))["files"]
    # relative paths and a fixed command: the bytes are the same wherever the case is generated
    command = f"acp-codegen generate --schema schema.json --package {PACKAGE} --out ."
    target = Target(case.name, PACKAGE, str(case / "schema.json"), command=command)
    run([target], out)
    package = out / PACKAGE
    found = {
        p.relative_to(package).as_posix(): p.read_text(encoding="utf-8")
        for p in package.rglob("*.py")
    }
    chosen = {
        path: text for path, text in found.items() if any(fnmatch.fnmatch(path, g) for g in files)
    }
    # the Source line names where the schema was read; the case's own file is `schema.json`
    return {
        path: text.replace(f"# Source: {case / 'schema.json'}\n", "# Source: schema.json\n")
        for path, text in chosen.items()
    }


def cases() -> list[Path]:
    """Every case directory, by name."""
    return sorted(p.parent for p in CASES.glob("*/case.json"))


def main() -> None:
    """Regenerate every case's `expected/`."""
    for case in cases():
        with tempfile.TemporaryDirectory(prefix="acp-case-") as tmp:
            files = generate(case, Path(tmp))
        expected = case / "expected"
        shutil.rmtree(expected, ignore_errors=True)
        for path, text in sorted(files.items()):
            target = expected / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        print(f"{case.name}: {len(files)} file(s)")


if __name__ == "__main__":
    sys.path.insert(0, str(CASES.parents[2]))
    main()
