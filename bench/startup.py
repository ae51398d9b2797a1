"""Start-up: import time and memory, the first message, and the time to `initialize`.

Every figure is a fresh subprocess (`sys.executable`), measured from just before it is spawned,
against the PyPI `agent-client-protocol` package (`import acp`) in the same run, in alternating
order (ABBA over the contenders), several rounds; the table shows medians, the spread (min-max)
and the ratio of medians to the package's:

- `import`: `python -c "import X"`, wall time to exit and the child's peak RSS (its own
  `VmHWM`, read as it exits: `wait4`'s figure would include the memory of the forking parent);
  `python -c pass` is shown too (the interpreter's own share, in every figure);
- `import + name`: `from X import <session/update params class>` (loads the models module);
- first message: process start to the first `session/update` parsed from wire bytes into the
  package's model and serialized back (the child prints it; timed to that line);
- time to `initialize`: spawn an echo agent and time until its `initialize` answer arrives (this
  process writes the request at once and reads the answer line): one built on the generated
  `acp_v2_draft` runtime (`Agent` / `serve_agent`), one on the PyPI package (`acp.run_agent`).

The goals are judged on the ratio of wall-time medians. For the first message and `initialize`
the table also shows each child's CPU time (to its exit), and the goals' lines the median of the
per-round ratios: on a noisy machine those move less than the wall time.

The generated packages are copied to a temporary directory and byte-compiled first, as `pip
install` leaves an installed package (the PyPI package has its `.pyc` files; without this the
generated side would pay the compiler at every start when `PYTHONDONTWRITEBYTECODE` is set).

Goals (ratios against the package, same run): `import acp_v2_draft` <= 0.25x and peak RSS no
higher; first message <= 0.5x; time to `initialize` <= 0.5x.

    python bench/startup.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
PACKAGES = ("acp_v2_draft", "acp_v2", "acp_v1")
PYPI = "pypi acp"

# The `session/update` params class of each contender, and a wire message it accepts.
_CHUNK_V1 = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
_CHUNK_V2 = {**_CHUNK_V1, "messageId": "msg_1"}
FIRST: dict[str, tuple[str, str, dict[str, object]]] = {
    "acp_v2_draft": ("acp_v2_draft", "UpdateSessionNotification", _CHUNK_V2),
    "acp_v2": ("acp_v2", "UpdateSessionNotification", _CHUNK_V2),
    "acp_v1": ("acp_v1", "SessionNotification", _CHUNK_V1),
    PYPI: ("acp.schema", "SessionNotification", _CHUNK_V1),
}

FIRST_MESSAGE = textwrap.dedent("""
    import sys
    from {module} import {name} as Notification
    wire = {wire!r}
    out = Notification.model_validate_json(wire).model_dump_json(by_alias=True, exclude_unset=True)
    sys.stdout.write(out + "\\n")
    sys.stdout.flush()
    """)

GENERATED_AGENT = textwrap.dedent('''
    """An echo agent on the generated runtime: answers initialize, new session, and echoes prompts."""
    import asyncio
    import acp_v2_draft as acp

    class EchoAgent(acp.Agent):
        async def initialize(self, params):
            return acp.InitializeResponse.from_dict({
                "protocolVersion": params.protocol_version,
                "info": {"name": "echo", "version": "1.0"}})

        async def session_new(self, params):
            return acp.NewSessionResponse.from_dict({"sessionId": "sess_echo"})

        async def session_prompt(self, params):
            for block in params.prompt:
                await self.peer.session_update(acp.UpdateSessionNotification.from_dict({
                    "sessionId": params.session_id,
                    "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m",
                               "content": {"type": "text", "text": getattr(block, "text", "")}}}))
            return acp.PromptResponse.from_dict({"stopReason": "end_turn"})

    asyncio.run(acp.serve_agent(EchoAgent()))
    ''')

PACKAGE_AGENT = textwrap.dedent('''
    """An echo agent on the PyPI package: answers initialize, new session, and echoes prompts."""
    import asyncio
    import acp
    from acp.schema import AgentMessageChunk, TextContentBlock

    class EchoAgent:
        def on_connect(self, conn):
            self.conn = conn

        async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
            return acp.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd, mcp_servers=None, **kw):
            return acp.NewSessionResponse(session_id="sess_echo")

        async def prompt(self, prompt, session_id, **kw):
            for block in prompt:
                await self.conn.session_update(session_id=session_id, update=AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=getattr(block, "text", ""))))
            return acp.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(EchoAgent()))
    ''')

INITIALIZE = {
    "acp_v2_draft": {"protocolVersion": 2, "info": {"name": "bench", "version": "1.0"}},
    PYPI: {"protocolVersion": 1, "clientCapabilities": {}},
}


def _env(path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]),
    }


def _spawn(args: list[str], env: dict[str, str], **kw: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, *args], env=env, **kw)  # type: ignore[call-overload, no-any-return]


# Appended to each `python -c`: the child's own peak RSS, in KiB, on its stdout.
_PEAK_RSS = (
    "\nimport sys\nfor _l in open('/proc/self/status'):\n"
    "    if _l.startswith('VmHWM:'): sys.stdout.write(_l.split()[1])\n"
)


def run_code(code: str, env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds to exit and peak RSS (KiB) of `python -c code`."""
    start = time.perf_counter()
    process = _spawn(["-c", code + _PEAK_RSS], env, stdout=subprocess.PIPE)
    out, _ = process.communicate()
    elapsed = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"python -c {code!r} exited with {process.returncode}")
    return elapsed, int(out)


def first_line(
    script: Path, env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, float]:
    """Seconds from spawning `script` (writing `stdin` at once) to its first output line, and the
    CPU seconds the child used in all (user + system, read as it exits: other processes on the
    machine do not count, unlike in the wall time)."""
    start = time.perf_counter()
    process = _spawn([str(script)], env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    if stdin is not None:
        process.stdin.write(stdin)
        process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    if not line:
        raise SystemExit(f"{script.name} printed nothing")
    if stdin is not None:
        answer = json.loads(line)
        if "result" not in answer:
            raise SystemExit(f"{script.name} answered {line!r}")
    process.stdin.close()  # an agent ends at end of input
    process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)  # an agent exits at end of input
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_utime + usage.ru_stime


def _request(params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    return (json.dumps(message) + "\n").encode()


def _stats(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def _row(label: str, values: list[float], base: list[float], unit: str, scale: float) -> str:
    med, lo, hi = _stats(values)
    ratio = med / statistics.median(base)
    return f"  {label:<28} {med * scale:9.1f} {unit} ({lo * scale:.1f}-{hi * scale:.1f})  {ratio:5.2f}x"


def measure(rounds: int, work: Path) -> dict[str, dict[str, list[float]]]:
    """Every figure of every contender, `rounds` times, alternating the order each round."""
    env = _env(work)
    scripts: dict[str, Path] = {}
    for key, (module, name, chunk) in FIRST.items():
        wire = json.dumps({"sessionId": "sess_1", "update": chunk}, separators=(",", ":"))
        scripts[f"first:{key}"] = work / f"first_{key.replace(' ', '_')}.py"
        scripts[f"first:{key}"].write_text(
            FIRST_MESSAGE.format(module=module, name=name, wire=wire)
        )
    scripts["agent:acp_v2_draft"] = work / "echo_generated.py"
    scripts["agent:acp_v2_draft"].write_text(GENERATED_AGENT)
    scripts[f"agent:{PYPI}"] = work / "echo_package.py"
    scripts[f"agent:{PYPI}"].write_text(PACKAGE_AGENT)

    jobs: list[tuple[str, str, Callable[[], tuple[float, ...]]]] = [
        ("python", "pass", lambda: run_code("pass", env))
    ]
    for key in (*PACKAGES, PYPI):
        module, name, _ = FIRST[key]
        top = "acp" if key == PYPI else key
        jobs.append((key, "import", lambda top=top: run_code(f"import {top}", env)))
        jobs.append((key, "name", lambda m=module, n=name: run_code(f"from {m} import {n}", env)))
        jobs.append((key, "first", lambda k=key: first_line(scripts[f"first:{k}"], env)))
    for key in ("acp_v2_draft", PYPI):
        req = _request(INITIALIZE[key])
        jobs.append(
            (key, "initialize", lambda k=key, r=req: first_line(scripts[f"agent:{k}"], env, r))
        )

    out: dict[str, dict[str, list[float]]] = {}
    for round_ in range(rounds):
        order = jobs if round_ % 2 == 0 else list(reversed(jobs))
        for key, what, job in order:
            result = job()
            out.setdefault(key, {}).setdefault(what, []).append(result[0])
            if len(result) > 1 and what == "import":
                out[key].setdefault(f"{what} rss", []).append(result[1] / 1024)
            elif len(result) > 1:
                out[key].setdefault(f"{what} cpu", []).append(result[1])
        print(f"round {round_ + 1}/{rounds} done", file=sys.stderr)
    return out


def report(out: dict[str, dict[str, list[float]]], rounds: int) -> None:
    """Print the table and the goals."""
    base = out[PYPI]
    print(
        f"Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; {rounds} rounds; medians (min-max); ratio vs {PYPI}"
    )
    print(f"  {'python -c pass':<28} {statistics.median(out['python']['pass']) * 1000:9.1f} ms")
    sections = [
        ("import X", "import", "ms", 1000.0),
        ("peak RSS after import", "import rss", "MiB", 1.0),
        ("import + params class", "name", "ms", 1000.0),
        ("first message", "first", "ms", 1000.0),
        ("first message, child CPU", "first cpu", "ms", 1000.0),
        ("time to initialize", "initialize", "ms", 1000.0),
        ("time to initialize, agent CPU", "initialize cpu", "ms", 1000.0),
    ]
    for title, what, unit, scale in sections:
        print(title)
        for key in (*PACKAGES, PYPI):
            if what in out[key]:
                print(_row(key, out[key][what], base[what], unit, scale))
    print()

    def ratio(what: str) -> float:
        return statistics.median(out["acp_v2_draft"][what]) / statistics.median(base[what])

    goals = [
        ("import acp_v2_draft", ratio("import"), 0.25),
        ("peak RSS after import", ratio("import rss"), 1.0),
        ("first message", ratio("first"), 0.5),
        ("time to initialize", ratio("initialize"), 0.5),
    ]
    for label, value, goal in goals:
        verdict = "met" if value <= goal else "NOT met"
        print(f"goal: {label:<24} {value:5.2f}x the package's (goal <= {goal}x): {verdict}")
    # The same runs seen two more ways, less exposed to the machine's noise: the median of each
    # round's own ratio (both measured within seconds of each other) and the children's CPU time.
    for label, what in (("first message", "first"), ("time to initialize", "initialize")):
        paired = statistics.median(
            a / b for a, b in zip(out["acp_v2_draft"][what], base[what], strict=True)
        )
        print(
            f"  {label}: median of per-round ratios {paired:.2f}x; CPU {ratio(what + ' cpu'):.2f}x"
        )


def main() -> None:
    """Copy and byte-compile the generated packages, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp-startup-") as tmp:
        work = Path(tmp)
        for package in PACKAGES:
            shutil.copytree(
                GENERATED / package, work / package, ignore=shutil.ignore_patterns("__pycache__")
            )
            compileall.compile_dir(work / package, quiet=1)
        report(measure(args.rounds, work), args.rounds)


if __name__ == "__main__":
    main()
