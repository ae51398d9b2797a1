"""A typed proxy without a hook: the generated `acp_v2_draft.Proxy` as it is. Every message meets
no typed hook, so each one takes the one pass-through path, raw (no model validation)."""

from __future__ import annotations

import asyncio

import acp_v2_draft as acp

if __name__ == "__main__":
    asyncio.run(acp.serve_proxy(acp.Proxy()))
