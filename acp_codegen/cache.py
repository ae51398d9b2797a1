"""Content-addressed text cache: files named by the sha256 of everything their text depends on.

Used by the stages whose output is a pure function of their inputs (DMCG's model rendering,
black's formatting). Reads and writes are best-effort: a missing, unreadable, read-only or full
cache only costs time, never a failed generate.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def cache_key(*parts: str) -> str:
    """The sha256 of the given texts (each one length-prefixed, so parts never run together)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode()
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def load_text(cache_dir: Path | None, key: str) -> str | None:
    """The cached text for `key`, or None (no cache, a miss, or an unreadable entry)."""
    if cache_dir is None:
        return None
    try:
        return (cache_dir / key).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def store_text(cache_dir: Path | None, key: str, text: str) -> None:
    """Write an entry atomically (temporary file + rename); failures are ignored."""
    if cache_dir is None:
        return
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, cache_dir / key)
    except OSError:
        pass
