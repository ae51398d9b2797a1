"""acp-runtime: the runtime library of the Python bindings that acp-codegen generates from the
Agent Client Protocol JSON Schema.

Generated packages hold only what the schema decides (models, enums, method tables, handler
bases, peers and builders) and import everything else from here, through one module:
`acp_runtime.bindings`, the contract between generated code and this library. Every package of
one process shares this runtime, so `acp_v1.RpcError is acp_v2_draft.RpcError`.

Sub-packages, each importable on its own (importing `acp_runtime` loads none of them):

- `acp_runtime.models`: the model machinery (base classes, open enums, leniency, fast path).
- `acp_runtime.jsonrpc`: JSON-RPC 2.0 connections, their guarantees and bounds, stdio.
- `acp_runtime.peers`: handler and peer bases, builders, agent processes.
- `acp_runtime.versions`: the version router and the negotiating client.
- `acp_runtime.lifecycle`: the prompt lifecycle by construction (an agent writes `respond(turn)`;
  a client awaits `prompt(...)`), for v1 and v2 alike, with the session history resume replays.
- `acp_runtime.remote`: WebSocket and Streamable HTTP servers and clients (the `remote` extra).
- `acp_runtime.proxies`: proxy chains: the `Proxy` base, the conductor (`acp-conductor`).

Depends on pydantic only (the `remote` extra adds the servers and HTTP clients).
"""

from __future__ import annotations

__version__ = "0.2.0"

__all__ = ["RuntimeVersionError", "__version__", "require"]


class RuntimeVersionError(ImportError):
    """A generated package was made for acp-runtime versions that exclude the installed one."""


def _parse(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def require(package: str, versions: str) -> None:
    """Fail the import of generated `package` unless this runtime's version is in `versions`.

    `versions` is what the generator wrote: `">=A,<B"` with dotted release numbers (pip's
    specifier syntax, so the fix can be pasted). Raises `RuntimeVersionError` (an `ImportError`)
    whose one line names both versions and the fix.
    """
    ours = _parse(__version__)
    fits = True
    for clause in versions.replace(" ", "").split(","):
        if clause.startswith(">="):
            fits = fits and ours >= _parse(clause[2:])
        elif clause.startswith("<"):
            fits = fits and ours < _parse(clause[1:])
        else:
            raise ValueError(f"{package}: unsupported acp-runtime version clause {clause!r}")
    if fits:
        return
    raise RuntimeVersionError(
        f"{package} needs acp-runtime {versions}, but acp-runtime {__version__} is installed: "
        f"run `pip install 'acp-runtime{versions}'`, or regenerate {package} with the acp-codegen "
        f"of acp-runtime {__version__}"
    )
