"""A broken proxy for `probe proxy`'s tests: it takes a plain `initialize` for `proxy/initialize`
and sends `proxy/successor` though, initialized as the terminal agent, it has no successor."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_runtime.proxies import Proxy, serve_proxy


class RoleBlind(Proxy[Any, Any]):
    """Answers plain `initialize` as if it were `proxy/initialize`."""

    async def unlisted_request(self, method: str, params: Any) -> Any:
        """Every request from the conductor, `initialize` read as `proxy/initialize`."""
        if method == "initialize":
            method = "proxy/initialize"
        return await super().unlisted_request(method, params)


if __name__ == "__main__":
    asyncio.run(serve_proxy(RoleBlind()))
