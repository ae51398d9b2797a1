"""A small agent written against the git-7b8a7094 bindings, touching only renamed names."""

from __future__ import annotations

import acp_bindings as acp
from acp_bindings import (  # the generated package
    Agent,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethodAgent,
    CancelNotification,
    LogoutRequest,
    LogoutResponse,
    PlanFile,
    ProviderInfo,
    SessionNotification,
)


def describe_plan(plan: PlanFile) -> str:
    """Where a plan lives."""
    return f"{plan.id} at {plan.uri}"  # the id is the plan's


def first_plan_id(plans: list[PlanFile]) -> str:
    """The id of the first plan."""
    for plan in plans:
        return str(plan.id)
    return ""


def new_plan(uri: str) -> PlanFile:
    """A plan file with a fixed id."""
    return PlanFile(id="plan-1", uri=uri)


def provider_label(info: ProviderInfo) -> str:
    """A provider's display label."""
    current = info
    return str(current.id)


def method_of(method: object) -> str:
    """The id of an agent auth method, or nothing."""
    if isinstance(method, AuthMethodAgent):
        return str(method.id)
    return ""


class EchoAgent(Agent):
    """Handles authentication and cancellation."""

    cancelled: list[CancelNotification]

    def __init__(self) -> None:
        self.cancelled = []

    async def authenticate(self, params: AuthenticateRequest) -> AuthenticateResponse:
        """Accept every method."""
        return AuthenticateResponse()

    async def logout(self, params: LogoutRequest) -> LogoutResponse:
        """Forget the user."""
        await self.authenticate(AuthenticateRequest(method_id=params.meta and "x" or "y"))
        return LogoutResponse()

    async def session_cancel(self, params: CancelNotification) -> None:
        """Remember the cancellation."""
        self.cancelled.append(params)


def last_update(updates: list[acp.SessionNotification]) -> SessionNotification | None:
    """The newest update, if any."""
    return updates[-1] if updates else None
