"""Shared helpers of the bindings tests: the generated packages, their IR, schema instances."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT / "generated", ROOT / "tests" / "models", Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
