"""The cluster's TypeScript phase (tests/cluster/run.py): the reference SDK's `ws-client` and
`http-client` (ts_cluster_client.mjs, one node process each) through the balancer, with the same
affinity check as our clients. Uses tests/remote's pinned SDK install (npm installs it when
missing), linked here as node_modules; skipped without node and npm."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cluster_kit import HERE


def node_client() -> str | None:
    """`node` with the TypeScript SDK reachable from here (tests/remote's pinned install, made
    with npm when missing, linked as node_modules), or None (the TypeScript phase is skipped)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None
    remote_dir = HERE.parent / "remote"
    if not (remote_dir / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund"],
            cwd=remote_dir,
            capture_output=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            return None
    link = HERE / "node_modules"
    if not link.exists():
        link.symlink_to(Path("..") / "remote" / "node_modules")
    return node


async def typescript(base: str, node: str | None, connections: int) -> dict[str, Any]:
    """Phase 1 again with the TypeScript SDK's ws and http clients (one node process each)."""
    if node is None:
        return {"skipped": "no node and npm, or the SDK could not be installed"}
    figures: dict[str, Any] = {}
    for transport in ("ws", "http"):
        url = f"{transport}://{base}/acp"
        process = await asyncio.create_subprocess_exec(
            node,
            str(HERE / "ts_cluster_client.mjs"),
            transport,
            url,
            str(connections),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 150)
        lines = out.decode().strip().splitlines()
        record = json.loads(lines[-1]) if lines else {"ok": False, "error": err.decode()[-2000:]}
        assert (
            process.returncode == 0 and record["ok"]
        ), f"TypeScript {transport}: {record['error']}"
        per_worker = dict(sorted(record["perWorker"].items()))
        assert len(per_worker) >= 2, f"TypeScript {transport}: all on one worker: {per_worker}"
        figures[transport] = {
            "connections": connections,
            "words_checked": record["words"],
            "connections_per_worker": per_worker,
        }
    return figures
