"""Uses of npm-2.0.0 attributes removed in npm-2.1.0: listed for a person."""

from __future__ import annotations

from acp_bindings import SessionMessageChunk


def sender(chunk: SessionMessageChunk) -> str:
    """Who sent a message chunk."""
    return str(chunk.sender_session_id)
