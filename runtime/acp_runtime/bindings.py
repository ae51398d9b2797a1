"""The contract between generated code and the runtime: every name a generated package imports
from acp-runtime, and nothing else.

acp-codegen writes `from acp_runtime.bindings import ...` in the modules it generates; no
generated module imports another module of this library. Within one release series (the
`>=A,<B` range a generated package states and checks with `acp_runtime.require`), a name here
keeps its meaning. Users import from the sub-packages (`acp_runtime.versions`, ...) or from their
generated package, which re-exports what they need.

Importing this module loads nothing: a name loads its sub-package the first time it is asked
(PEP 562), so a generated model does not bring asyncio or the JSON-RPC runtime. Type checkers
see the plain imports below.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # explicit re-exports (`X as X`): the names below, as type checkers see them
    from .jsonrpc import Connection as Connection
    from .jsonrpc import MethodSpec as MethodSpec
    from .jsonrpc import RpcError as RpcError
    from .jsonrpc import handled_methods as handled_methods
    from .jsonrpc import method_table as method_table
    from .models import NONE_TAG as NONE_TAG
    from .models import NOT_KNOWN_TAG as NOT_KNOWN_TAG
    from .models import NOT_NULL as NOT_NULL
    from .models import ONE_OF as ONE_OF
    from .models import STRICT_FIRST as STRICT_FIRST
    from .models import UNKNOWN_TAG as UNKNOWN_TAG
    from .models import AcpModel as AcpModel
    from .models import Apart as Apart
    from .models import Integer as Integer
    from .models import JsonInt as JsonInt
    from .models import OpenEnum as OpenEnum
    from .models import Sequence as Sequence
    from .models import TaggedBy as TaggedBy
    from .models import TaggedModel as TaggedModel
    from .models import TagValue as TagValue
    from .models import complete_models as complete_models
    from .models import lenient as lenient
    from .models import member as member
    from .peers import AgentHandler as AgentHandler
    from .peers import AgentPeerBase as AgentPeerBase
    from .peers import Binding as Binding
    from .peers import ClientHandler as ClientHandler
    from .peers import PeerBase as PeerBase
    from .peers import SpawnOptions as SpawnOptions
    from .peers import StderrTail as StderrTail
    from .peers import build as build
    from .peers import connect_agent as connect_agent
    from .peers import serve_agent as serve_agent
    from .peers import spawn_agent as spawn_agent
    from .peers import stop_process as stop_process
    from .proxies import ProxyBase as ProxyBase
    from .proxies import serve_proxy as serve_proxy
    from .versions import Negotiated as Negotiated
    from .versions import Routed as Routed
    from .versions import UnsupportedVersionError as UnsupportedVersionError
    from .versions import VersionRouter as VersionRouter
    from .versions import negotiate as negotiate
    from .versions import serve_versions as serve_versions
    from .versions import spawn_negotiated as spawn_negotiated

# The names, by the sub-package that defines them.
_SOURCES: dict[str, tuple[str, ...]] = {
    "jsonrpc": ("Connection", "MethodSpec", "RpcError", "handled_methods", "method_table"),
    "models": (
        "NONE_TAG",
        "NOT_KNOWN_TAG",
        "NOT_NULL",
        "ONE_OF",
        "STRICT_FIRST",
        "UNKNOWN_TAG",
        "AcpModel",
        "Apart",
        "Integer",
        "JsonInt",
        "OpenEnum",
        "Sequence",
        "TagValue",
        "TaggedBy",
        "TaggedModel",
        "complete_models",
        "lenient",
        "member",
    ),
    "peers": (
        "AgentHandler",
        "AgentPeerBase",
        "Binding",
        "ClientHandler",
        "PeerBase",
        "SpawnOptions",
        "StderrTail",
        "build",
        "connect_agent",
        "serve_agent",
        "spawn_agent",
        "stop_process",
    ),
    "proxies": ("ProxyBase", "serve_proxy"),
    "versions": (
        "Negotiated",
        "Routed",
        "UnsupportedVersionError",
        "VersionRouter",
        "negotiate",
        "serve_versions",
        "spawn_negotiated",
    ),
}
_SOURCE_OF = {name: source for source, names in _SOURCES.items() for name in names}

# Defined for the interpreter only: a type checker that saw a module `__getattr__` would accept
# any name of the module (tests hold `_SOURCES` to the imports above).
if not TYPE_CHECKING:
    __all__ = sorted(_SOURCE_OF)

    def __getattr__(name: str) -> Any:
        """PEP 562: bind the names of the sub-package that defines `name`, at its first use."""
        source = _SOURCE_OF.get(name)
        if source is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module = import_module(f"{__package__}.{source}")
        globals().update({each: getattr(module, each) for each in _SOURCES[source]})
        return globals()[name]

    def __dir__() -> list[str]:
        """The module's names, without loading a sub-package."""
        return sorted({*globals(), *__all__})
