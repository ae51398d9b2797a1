"""A small client written against the npm-2.0.0 bindings: its auth capabilities (a renamed class)."""

from __future__ import annotations

from acp_bindings import AuthCapabilities, ClientCapabilities, TerminalAuthCapabilities


def capabilities(terminal: bool) -> ClientCapabilities:
    """What this client can do."""
    auth = AuthCapabilities(terminal=TerminalAuthCapabilities() if terminal else None)
    return ClientCapabilities(auth=auth)


def supports_terminal(caps: AuthCapabilities | None) -> bool:
    """Whether terminal auth is advertised."""
    return caps is not None and caps.terminal is not None
