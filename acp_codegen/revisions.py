"""What an argument naming a schema revision means: a source spec, a local path or a pinned target.

Every command that takes a revision (`diff OLD NEW`, `migrate --from/--to`, `check-transcript
--schema`, `probe --schema`, `scaffold --schema`, `init SOURCE`) reads it through `Resolver`,
with one precedence, first match wins:

1. `npm:...`, `github:...`, `http://...`, `https://...`: that source spec.
2. `pin:NAME`: the pinned target NAME, whatever else is called so.
3. Anything holding a `/` (`./acp_v1`, `../schemas/x`) or ending in `.json`: that local path.
4. A bare word naming a pinned target: that target. A directory of the same name (the target's
   own generated package, as a project lays them out) does not compete: a directory is never a
   schema. A *file* of the same name does: the argument is then ambiguous, an error saying how to
   pick one (`pin:NAME` or `./NAME`).
5. A bare word naming an existing file: that file.

Anything else is an error listing the known targets. The pin file is read only when a bare word
needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from acp_codegen.errors import fail
from acp_codegen.pins import Pin, PinFile, load_pins

SPEC_PREFIXES = ("npm:", "github:", "http://", "https://")
PIN_PREFIX = "pin:"
_COMMIT = re.compile(r"@([0-9a-f]{12,40})#")


@dataclass(frozen=True)
class RevisionRef:
    """A revision to load: how the user named it, its source spec and expected sha256."""

    label: str
    source: str
    sha256: str | None = None
    pin: Pin | None = None


def is_path_like(arg: str) -> bool:
    """Whether an argument spells a path by its form alone (rule 3 of the precedence)."""
    return "/" in arg or "\\" in arg or arg.endswith(".json")


class Resolver:
    """Turns revision arguments into `RevisionRef`s, reading the pin file only when needed."""

    def __init__(self, pins_path: Path) -> None:
        self.pins_path = pins_path
        self._pins: PinFile | None = None

    def pins(self) -> PinFile:
        """The pin file (loaded once)."""
        if self._pins is None:
            self._pins = load_pins(self.pins_path)
        return self._pins

    def known(self) -> str:
        """The pinned target names, for error messages."""
        return ", ".join(p.name for p in self.pins().targets)

    def pinned(self, name: str) -> RevisionRef:
        """The pinned target `name` (an `unknown-target` error otherwise)."""
        pin = self.pins().get(name)
        if pin is None:
            raise fail(
                "unknown-target",
                f"no pinned target {name!r} (known: {self.known()})",
                file=str(self.pins_path),
            )
        return RevisionRef(name, pin.source, pin.sha256, pin)

    def resolve(self, arg: str) -> RevisionRef:
        """What `arg` names, by the module's precedence."""
        if arg.startswith(SPEC_PREFIXES):
            return RevisionRef(arg, arg)
        if arg.startswith(PIN_PREFIX):
            return self.pinned(arg.removeprefix(PIN_PREFIX))
        if is_path_like(arg):
            return RevisionRef(arg, arg)
        is_file = Path(arg).is_file()
        pin = self.pins().get(arg) if arg else None
        if pin is not None and is_file:
            raise fail(
                "ambiguous-revision",
                f"{arg!r} is both a pinned target and a file here: write {PIN_PREFIX}{arg} for "
                f"the target or ./{arg} for the file",
                file=arg,
            )
        if pin is not None:
            return RevisionRef(arg, pin.source, pin.sha256, pin)
        if is_file:
            return RevisionRef(arg, arg)
        raise fail(
            "unknown-target",
            f"{arg!r} is neither a file, a source spec (npm:, github:, https://) nor a pinned "
            f"target (known: {self.known()})",
            file=str(self.pins_path),
        )

    def history(self, target: str) -> list[RevisionRef]:
        """A pinned target's history (oldest first) followed by its current source."""
        ref = self.pinned(target)
        assert ref.pin is not None
        pin = ref.pin
        refs = [RevisionRef(short_label(h.source), h.source, h.sha256) for h in pin.history]
        return refs + [
            RevisionRef(f"{target} ({short_label(pin.source)})", pin.source, pin.sha256, pin)
        ]


def short_label(source: str) -> str:
    """A readable name for a source spec: the path inside a package dropped, commits shortened."""
    if source.startswith(("npm:", "github:")):
        return _COMMIT.sub(lambda m: "@" + m.group(1)[:8] + "#", source).split("#", 1)[0]
    return source
