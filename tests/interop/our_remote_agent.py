"""A scaffolded agent served remotely by `acp_runtime.remote.serve_remote` with an option its
`--listen` does not offer: `correlate_responses_by_id=True`, which takes a client's response POST
that lacks `Acp-Session-Id` (as the PyPI SDK 1.0.0rc3's HTTP client sends them) by its JSON-RPC id.

usage: python our_remote_agent.py PACKAGE PORT   (PACKAGE, a scaffolded agent, on PYTHONPATH)

Serves what `PACKAGE --listen 127.0.0.1:PORT` serves (its version router, one per connection),
until terminated.
"""

from __future__ import annotations

import importlib
import sys

from acp_runtime import remote


def main() -> None:
    package, port = sys.argv[1], int(sys.argv[2])
    agent = importlib.import_module(f"{package}.agent")
    remote.serve_remote(
        lambda: agent.serve_routed,
        "127.0.0.1",
        port,
        log_level="warning",
        correlate_responses_by_id=True,
    )


if __name__ == "__main__":
    main()
