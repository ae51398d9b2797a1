"""Diagnostics as values: every stage reports problems as `Diagnostic`s, the CLI prints them
once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in the input: level, stable code, message, file and JSON pointer."""

    level: Level
    code: str
    message: str
    file: str | None = None
    pointer: str | None = None

    def render(self) -> str:
        """One line: `error[code] file#/pointer: message`."""
        where = self.file or "<input>"
        if self.pointer is not None:
            where = f"{where}#{self.pointer}"
        return f"{self.level}[{self.code}] {where}: {self.message}"


class CodegenError(Exception):
    """Raised by a stage that cannot go on; carries the diagnostics that explain why."""

    def __init__(self, *diagnostics: Diagnostic) -> None:
        super().__init__("\n".join(d.render() for d in diagnostics))
        self.diagnostics: tuple[Diagnostic, ...] = diagnostics


def fail(
    code: str, message: str, *, file: str | None = None, pointer: str | None = None
) -> CodegenError:
    """Build a CodegenError holding a single error diagnostic (raise the result)."""
    return CodegenError(Diagnostic("error", code, message, file, pointer))


def escape_pointer_token(token: str | int) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_join(base: str, *tokens: str | int) -> str:
    """Append escaped tokens to a JSON pointer."""
    return base + "".join("/" + escape_pointer_token(t) for t in tokens)
