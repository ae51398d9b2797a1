"""Our HTTP client (default ``ClientLimits``) against one hostile agent, for its peak memory.

Run as `python hostile_http_client.py URL STEPS`: sends `initialize`, then (STEPS "more") one
more request; prints one JSON line: how each ended and the process's peak RSS in kB.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from typing import Any

from acp_runtime import jsonrpc, remote

INIT = {"protocolVersion": 2, "clientCapabilities": {}}


async def main(url: str, steps: str) -> dict[str, Any]:
    pipe, sink = await remote.open_http(url)
    outcomes: list[str] = []
    async with jsonrpc.Connection(object(), {}, pipe, sink) as connection:
        calls = [("initialize", INIT)] + ([("x/ping", {})] if steps == "more" else [])
        for method, params in calls:
            try:
                await asyncio.wait_for(connection.request(method, params, None), 60)
                outcomes.append("ok")
            except (jsonrpc.RpcError, ConnectionError, TimeoutError) as exc:
                outcomes.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        if steps == "more":
            await asyncio.sleep(1.0)  # room for streams being opened
    return {"outcomes": outcomes, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
