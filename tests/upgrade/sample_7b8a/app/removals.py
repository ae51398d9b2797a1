"""Uses of git-7b8a7094 bindings that are gone in git-a57b538d: listed for a person, never rewritten."""

from __future__ import annotations

from acp_bindings import Agent, InitializeResponse, LoadSessionRequest, LoadSessionResponse


class LoadingAgent(Agent):
    """Still implements session/load."""

    async def session_load(self, params: LoadSessionRequest) -> LoadSessionResponse:
        """Replay a session."""
        return LoadSessionResponse()


def agent_name(response: InitializeResponse) -> str:
    """The agent's name from its initialize response."""
    info = response.agent_info
    return info.name if info else ""
