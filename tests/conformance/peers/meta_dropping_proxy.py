"""A broken proxy for `probe proxy`'s tests: it forwards every request to its successor with the
params' `_meta` dropped (the proxy-chains RFD: a proxy SHOULD preserve metadata)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_runtime.proxies import Proxy, serve_proxy


class MetaDropping(Proxy[Any, Any]):
    """Forwards downstream requests without their `_meta`; everything else as `Proxy` does."""

    async def downstream_request(self, method: str, params: Any) -> Any:
        """Drop `_meta`, then forward."""
        if isinstance(params, dict):
            params = {name: value for name, value in params.items() if name != "_meta"}
        return await super().downstream_request(method, params)


if __name__ == "__main__":
    asyncio.run(serve_proxy(MetaDropping()))
