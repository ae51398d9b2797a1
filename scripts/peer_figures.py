"""Run every third-party ACP peer of tests/interop/peers/catalog.py under `probe agent` or
`probe client` and write their figures: docs/peer-figures.json and the table of
docs/conformance.md (run by `nox -s interop`; installs each peer into its own environment, see
tests/interop/peer_envs.py). `--render` only rewrites the table from the JSON; NAME... re-measures
only the peers whose name contains one of the words (the others keep their figures).

usage: python scripts/peer_figures.py [--render] [NAME...]"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.interop.peers.catalog import PEER_LIST
from tests.interop.peers.figures import DOC, FIGURES, measure, with_table


def write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    if "--render" in sys.argv[1:]:
        figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    else:
        only = [a for a in sys.argv[1:] if not a.startswith("--")]  # NAME...: re-measure only those
        previous = (
            json.loads(FIGURES.read_text(encoding="utf-8")) if only and FIGURES.is_file() else []
        )
        kept = {(row["peer"], row["probe"]): row for row in previous}
        figures = []
        for peer in PEER_LIST:
            if (
                only
                and not any(word in peer.name for word in only)
                and (peer.name, peer.role) in kept
            ):
                figures.append(kept[(peer.name, peer.role)])
                continue
            print(f"probing {peer.name} ({peer.role})", file=sys.stderr, flush=True)
            figures.append(measure(peer))
        write(FIGURES, json.dumps(figures, indent=2) + "\n")
    text = DOC.read_text(encoding="utf-8")
    updated = with_table(text, figures)
    if updated != text:
        write(DOC, updated)
