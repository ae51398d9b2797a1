"""The plainest proxy: `Proxy()` forwards everything unchanged. With PROXY_PIDS set, it writes
its pid into that directory (the tests check the chain stops it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from acp_runtime.proxies import Proxy, serve_proxy

if __name__ == "__main__":
    if "PROXY_PIDS" in os.environ:
        Path(os.environ["PROXY_PIDS"], str(os.getpid())).touch()
    asyncio.run(serve_proxy(Proxy()))
