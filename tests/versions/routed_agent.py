"""`serve_versions` on this process's stdio: `python routed_agent.py 1,2` serves v1 and v2."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.versions.versions_kit import V1Agent, V2Agent, acp_v2

if __name__ == "__main__":
    agents = {1: V1Agent, 2: V2Agent}
    versions = {int(v): agents[int(v)] for v in sys.argv[1].split(",")}
    asyncio.run(acp_v2.serve_versions(versions))
