"""The bases of the generated handler classes (`Agent`, `Client`) and what ties a handler to its
package: `Binding`, the method tables of both sides, which the generated `dispatch` module
makes once and puts on its handler classes.

Whatever spans packages (the version router, the negotiating client, the remote server) reads a
handler's `binding` and calls its `attach`; it never looks for the handler's package. A handler
is generic in the peer it gets (`Agent(AgentHandler[ClientPeer])`), so code given handlers of
several protocol versions is typed by them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from ..jsonrpc import Connection, MethodSpec
from .base import PeerBase

_log = logging.getLogger(__name__)

P_co = TypeVar("P_co", bound=PeerBase, covariant=True)


@dataclass(frozen=True)
class Binding:
    """What a generated package decides for a connection: the methods each side handles."""

    agent_methods: Mapping[str, MethodSpec]
    """Requests and notifications an agent handles, by wire method name."""

    client_methods: Mapping[str, MethodSpec]
    """Requests and notifications a client handles, by wire method name."""


class Handler(Generic[P_co]):
    """One side of a connection: the generated `Agent` or `Client`, which users subclass.

    `binding` is the package's method tables (a class attribute of the generated class);
    `attach` makes the typed peer on a connection and keeps it as `self.peer`.
    """

    binding: ClassVar[Binding]

    @property
    def inbound_methods(self) -> Mapping[str, MethodSpec]:
        """The methods this side handles (the table its connection dispatches with)."""
        raise NotImplementedError

    def attach(self, connection: Connection) -> P_co:
        """Make the typed peer on `connection`, keep it as `self.peer` and return it."""
        raise NotImplementedError

    async def extension_request(self, method: str, params: Any) -> Any:
        """A `_`-prefixed extension request; unimplemented ones answer -32601."""
        raise NotImplementedError(method)

    async def extension_notification(self, method: str, params: Any) -> None:
        """A `_`-prefixed extension notification; ignored by default."""
        _log.debug("ignored extension notification %s", method)


class AgentHandler(Handler[P_co]):
    """Base of a generated `Agent`: it handles the agent side's methods."""

    @property
    def inbound_methods(self) -> Mapping[str, MethodSpec]:
        """The agent side's method table."""
        return self.binding.agent_methods


class ClientHandler(Handler[P_co]):
    """Base of a generated `Client`: it handles the client side's methods."""

    @property
    def inbound_methods(self) -> Mapping[str, MethodSpec]:
        """The client side's method table."""
        return self.binding.client_methods
