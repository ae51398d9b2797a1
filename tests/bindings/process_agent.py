"""Agents for the process tests: `python process_agent.py <mode>`.

- `flood`: writes 8 MiB to stderr (in lines) before serving, then serves `initialize`;
- `stubborn`: ignores SIGTERM and stdin EOF (it would have to be killed);
- `deaf`: ignores stdin EOF but not SIGTERM;
- `polite`: serves until EOF, then exits 0.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time

import acp_v2_draft as acp


class Agent(acp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=params.protocol_version,
            info=acp.Implementation(name="agent", version="1.0"),
        )


def main(mode: str) -> None:
    if mode == "flood":
        line = b"x" * 1023 + b"\n"
        for _ in range(8 * 1024):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.write(b"last line without newline")
        sys.stderr.flush()
    if mode in ("stubborn", "deaf"):
        if mode == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        asyncio.run(acp.serve_agent(Agent()))
        print("eof, still here", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    asyncio.run(acp.serve_agent(Agent()))


if __name__ == "__main__":
    main(sys.argv[1])
