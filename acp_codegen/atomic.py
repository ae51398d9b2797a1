"""Atomic file writes that keep the mode the umask gives (issue 32, requirement 5).

Every file the toolkit writes outside a package swap (scaffolded project files, the pin file,
migrated code, reports, cached downloads) goes through `write_atomic`: the new bytes go to a
uniquely named sibling opened with `O_CREAT | O_EXCL` and mode 0666, so the kernel applies the
process's umask itself (no `os.umask` set-and-restore, which races with other threads, and no
`mkstemp`, whose files are always 0600); the sibling is then renamed over the target in one step,
so a reader sees the old file or the new one, never a part. A file that already exists keeps its
own mode (a pin file the user made 0640 stays 0640).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace (or create) `path` with `data` (text is written as UTF-8, newlines untouched) in
    one rename; a failure leaves the old file as it was and no temporary file behind."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None  # a new file: the umask decides, through os.open's 0666 below
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            handle = os.open(temporary, _FLAGS, 0o666)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            if mode is not None:
                os.fchmod(out.fileno(), mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
