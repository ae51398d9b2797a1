"""`acp-codegen scaffold agent|client|proxy DIR`: names, directory checks, schemas, and what gets written.

These run the CLI in a subprocess and never install anything: a scaffolded project's own tests
run here with this venv's Python and the project on PYTHONPATH (pydantic, rich and pytest are
available in it). Installing into fresh venvs is test_scaffold_projects.py's business.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from scaffold_support import CliResult, run_cli, run_project_tests, tree_bytes

from acp_codegen.scaffold.project import INSTALL_COMMAND, TEST_COMMAND, project_names


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, CliResult]]:
    """An agent `echo`, a client `viewer` and a proxy `ctx`, scaffolded once for the tests that
    only read them."""
    base = tmp_path_factory.mktemp("made")
    return {
        kind: (base / name, run_cli("scaffold", kind, base / name))
        for kind, name in (("agent", "echo"), ("client", "viewer"), ("proxy", "ctx"))
    }


def assert_one_error_line(result: CliResult, code: str) -> None:
    """Exit 2, nothing on stdout, exactly one `error[code]` line on stderr, no traceback."""
    assert result.returncode == 2, result.describe()
    assert result.stdout == "", result.describe()
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error[{code}]"), result.describe()


@pytest.mark.parametrize(
    ("raw", "package", "dist", "title"),
    [
        ("my-agent", "my_agent", "my-agent", "My Agent"),
        ("My Cool.Agent", "my_cool_agent", "my-cool-agent", "My Cool Agent"),
        ("-x--y_", "x_y", "x-y", "X Y"),
        ("agent2", "agent2", "agent2", "Agent2"),
    ],
)
def test_names_are_normalised(raw: str, package: str, dist: str, title: str) -> None:
    names = project_names(raw, origin="--name")
    assert (names.package, names.dist, names.title) == (package, dist, title)


@pytest.mark.parametrize(
    "name", ["123agent", "my/agent", "émile", "class", "json", "rich", "tests", "__", "a b!"]
)
def test_a_bad_name_is_one_clear_error_and_writes_nothing(tmp_path: Path, name: str) -> None:
    target = tmp_path / "out"
    result = run_cli("scaffold", "agent", target, "--name", name)
    assert_one_error_line(result, "bad-name")
    assert "--name" in result.stderr and repr(name) in result.stderr
    assert not target.exists()


def test_the_default_name_comes_from_the_directory(tmp_path: Path) -> None:
    result = run_cli("scaffold", "agent", tmp_path / "Fancy-Echo")
    assert result.returncode == 0, result.describe()
    project = tmp_path / "Fancy-Echo"
    assert (project / "fancy_echo" / "agent.py").is_file()
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert 'name = "fancy-echo"' in pyproject
    assert 'fancy-echo = "fancy_echo.agent:main"' in pyproject
    assert "created agent project fancy-echo" in result.stdout


def test_a_directory_name_that_is_not_a_name_asks_for_name(tmp_path: Path) -> None:
    result = run_cli("scaffold", "client", tmp_path / "42")
    assert_one_error_line(result, "bad-name")
    assert result.stderr.startswith("error[bad-name] DIR:")
    assert not (tmp_path / "42").exists()


def test_a_non_empty_directory_needs_force(tmp_path: Path) -> None:
    project = tmp_path / "busy"
    project.mkdir()
    (project / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = tree_bytes(project)
    result = run_cli("scaffold", "agent", project)
    assert_one_error_line(result, "not-empty")
    assert "--force" in result.stderr
    assert tree_bytes(project) == before

    (project / "busy").mkdir()
    (project / "busy" / "agent.py").write_text("old\n", encoding="utf-8")
    forced = run_cli("scaffold", "agent", project, "--force")
    assert forced.returncode == 0, forced.describe()
    assert (project / "notes.txt").read_text(encoding="utf-8") == "mine\n"  # other files stay
    assert "serve_versions(AGENTS)" in (project / "busy" / "agent.py").read_text(encoding="utf-8")


def test_scaffolding_again_with_force_changes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "again"
    assert run_cli("scaffold", "client", project).returncode == 0
    first = tree_bytes(project)
    result = run_cli("scaffold", "client", project, "--force")
    assert result.returncode == 0, result.describe()
    assert tree_bytes(project) == first


def test_a_file_is_not_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x", encoding="utf-8")
    assert_one_error_line(run_cli("scaffold", "agent", path, "--name", "ok"), "not-a-directory")


def test_a_schema_without_the_v2_lifecycle_is_refused(tmp_path: Path) -> None:
    result = run_cli("scaffold", "agent", tmp_path / "old", "--schema", "acp_v1")
    assert_one_error_line(result, "incompatible-schema")
    assert "update user_message" in result.stderr and "update state_update" in result.stderr
    assert "--protocol 1" in result.stderr  # the way to v1 bindings
    assert not (tmp_path / "old").exists()


def test_a_v1_schema_is_refused_for_the_v2_side_next_to_v1(tmp_path: Path) -> None:
    result = run_cli("scaffold", "agent", tmp_path / "old", "--v1-schema", "acp_v2")
    assert_one_error_line(result, "incompatible-schema")
    assert "ACP v1 prompt lifecycle" in result.stderr and "update plan" in result.stderr


@pytest.mark.parametrize("protocol", ["0", "3"])
def test_an_unknown_protocol_version_is_refused(tmp_path: Path, protocol: str) -> None:
    assert_one_error_line(
        run_cli("scaffold", "agent", tmp_path / "x", "--protocol", protocol), "bad-protocol"
    )
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "protocol", ["1", pytest.param("2", marks=pytest.mark.slow)]
)  # 2: nox -s slow
def test_a_one_version_client_speaks_only_that_version_and_passes_its_own_tests(
    tmp_path: Path, protocol: str, mypy_cache: Path
) -> None:
    # issue 33: `--protocol 1` was refused although the help offered it
    project = tmp_path / f"client_v{protocol}"
    result = run_cli("scaffold", "client", project, "--protocol", protocol)
    assert result.returncode == 0, result.describe()
    package = project / project.name
    # a v1-only client keeps the v2 bindings as its display model (v2's session state), unspoken
    assert (package / "acp").exists() and (package / "acp_v1").exists() == (protocol == "1")
    assert (package / "v1.py").exists() == (protocol == "1")
    assert (project / "tests" / "fake_agent.py").exists() == (protocol == "2")
    client = (package / "client.py").read_text(encoding="utf-8")
    assert f"PROTOCOL_VERSION = {protocol}" in client
    assert ("clients[2] = client" in client) == (protocol == "2")
    assert ("clients[1] = v1.V1Client(client)" in client) == (protocol == "1")
    done = run_project_tests(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b\d+ passed\b", done.stdout) and "failed" not in done.stdout, done.stdout
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(mypy_cache)]
        + [project.name, "tests"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert typed.returncode == 0, typed.stdout


def test_an_unknown_schema_name_is_refused(tmp_path: Path) -> None:
    result = run_cli("scaffold", "agent", tmp_path / "x", "--schema", "acp_v9")
    assert_one_error_line(result, "unknown-target")


def test_the_project_layout(made: dict[str, tuple[Path, CliResult]]) -> None:
    project, result = made["agent"]
    assert result.returncode == 0, result.describe()
    files = set(tree_bytes(project))
    assert {
        "pyproject.toml",
        "README.md",
        ".gitignore",
        "echo/__init__.py",
        "echo/__main__.py",
        "echo/agent.py",
        "echo/agent_v1.py",
        "echo/agent_v2.py",
        "echo/echo.py",
        "echo/py.typed",
        "echo/acp_v1/__init__.py",
        "echo/acp_v1/dispatch.py",
        "echo/acp_v1/py.typed",
        "echo/acp/__init__.py",
        "echo/acp/dispatch.py",
        "echo/acp/models.py",
        "echo/acp/session.py",
        "echo/acp/py.typed",
        "tests/test_agent.py",
        "tests/test_agent_v1.py",
        "acp_runtime/__init__.py",
        "acp_runtime/bindings.py",
        "acp_runtime/jsonrpc/connection.py",
        "acp_runtime/VENDORED.md",
    } <= files
    # one copy of the runtime for both versions, beside the package; the bindings hold none
    in_bindings = [f for f in files if f.startswith("echo/acp") and "/_models/" not in f]
    assert not [f for f in files if "/acp_runtime/" in f] + [
        f for f in in_bindings if f.rsplit("/", 1)[1][:1] == "_" and not f.endswith("/__init__.py")
    ]
    assert f"({len(files)} files;" in result.stdout
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'dependencies = \[\s*"pydantic>=[\d.]+",\s*\]', pyproject), pyproject
    assert (
        '"acp_runtime", "acp_runtime.jsonrpc"' in pyproject
        and '"acp_runtime" = ["py.typed"]' in pyproject
    )
    header = (project / "echo" / "acp" / "models.py").read_text(encoding="utf-8")
    # the headers name the project's pin file's command (it says where and that the runtime is vendored)
    assert (
        header.startswith("# Generated by acp-codegen")
        and "# Regenerate: acp-codegen generate acp\n" in header
    )
    header = (project / "echo" / "acp_v1" / "models.py").read_text(encoding="utf-8")
    assert (
        "# Regenerate: acp-codegen generate acp_v1\n" in header
        and "#schema/v1/schema.json" in header
    )
    assert '"echo.acp_v1"' in pyproject and '"echo.acp"' in pyproject


def test_the_client_depends_on_pydantic_and_rich_only(
    made: dict[str, tuple[Path, CliResult]],
) -> None:
    project, result = made["client"]
    assert result.returncode == 0, result.describe()
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"dependencies = \[(.*?)\]", pyproject, re.DOTALL)
    assert deps is not None
    assert sorted(re.findall(r'"([a-z_-]+)[<>=]', deps.group(1))) == ["pydantic", "rich"]
    assert 'viewer = "viewer.client:main"' in pyproject


@pytest.mark.parametrize("kind", ["agent", "client", "proxy"])
def test_the_readme_gives_the_install_and_test_commands(
    made: dict[str, tuple[Path, CliResult]], kind: str
) -> None:
    project, _ = made[kind]
    readme = (project / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.DOTALL)
    assert blocks[:2] == [INSTALL_COMMAND, TEST_COMMAND]


@pytest.mark.parametrize("kind", ["agent", "client", "proxy"])
def test_the_readme_regenerate_commands_reproduce_the_bindings(
    made: dict[str, tuple[Path, CliResult]], kind: str
) -> None:
    project, _ = made[kind]
    readme = (project / "README.md").read_text(encoding="utf-8")
    block = re.findall(r"```sh\n(acp-codegen generate .*?)\n```", readme, re.DOTALL)
    assert len(block) == 1
    commands = block[0].splitlines()
    # the pin file's targets, as every binding file's header names them
    versions = ["acp"] if kind == "proxy" else ["acp_v1", "acp"]  # a proxy speaks v2 only
    assert commands == [f"acp-codegen generate {name}" for name in versions]
    for command in commands:
        result = run_cli(*command.split()[1:], "--check", cwd=project)
        assert result.returncode == 0, result.describe()  # no drift: the same bindings
    header = (
        (project / project.name / "acp" / "__init__.py").read_text(encoding="utf-8").splitlines()
    )
    assert "# Regenerate: acp-codegen generate acp" in header


def test_the_proxy_project_layout_and_its_own_tests(
    made: dict[str, tuple[Path, CliResult]],
) -> None:
    # issue 36: a proxy project speaks v2 (the proxy methods are the draft's), depends on pydantic
    # only, ships the conductor with its vendored runtime, and its own test runs a real chain
    project, result = made["proxy"]
    assert result.returncode == 0, result.describe()
    files = set(tree_bytes(project))
    assert {
        "ctx/proxy.py",
        "ctx/__main__.py",
        "ctx/acp/dispatch.py",
        "tests/test_proxy.py",
        "tests/echo_agent.py",
        "acp_runtime/proxies/cli.py",
        "schema/pins.toml",
        ".github/workflows/acp-codegen.yml",
    } <= files
    assert not [f for f in files if f.startswith("ctx/acp_v1/")]
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'dependencies = \[\s*"pydantic>=[\d.]+",\s*\]', pyproject), pyproject
    assert 'ctx = "ctx.proxy:main"' in pyproject
    assert 'acp-conductor = "acp_runtime.proxies.cli:main"' in pyproject
    assert '"acp_runtime.proxies"' in pyproject
    done = run_project_tests(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b2 passed\b", done.stdout) and "failed" not in done.stdout, done.stdout


def test_the_readme_says_what_moving_off_the_vendored_runtime_removes(
    made: dict[str, tuple[Path, CliResult]],
) -> None:
    # every packaging entry that exists for the vendored copy is named by the README's way to
    # depend on acp-runtime instead (a left `acp-conductor` script would make two distributions
    # install the same file)
    for kind in ("agent", "proxy"):
        project = made[kind][0]
        pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
        readme = " ".join((project / "README.md").read_text(encoding="utf-8").split())
        steps = readme.partition("To depend on the published runtime instead")[2]
        steps = steps.partition("The bindings are the same either way")[0]
        setuptools = pyproject["tool"]["setuptools"]
        entries = [
            *(["`packages`"] if "acp_runtime" in setuptools["packages"] else []),
            *(["`package-data`"] if "acp_runtime" in setuptools["package-data"] else []),
            *(
                f"`{script}`"
                for script, target in pyproject["project"]["scripts"].items()
                if target.startswith("acp_runtime.")
            ),
        ]
        assert len(entries) == (3 if kind == "proxy" else 2), entries
        assert steps and [e for e in entries if e not in steps] == [], kind


def test_a_proxy_needs_a_schema_with_the_proxy_methods(tmp_path: Path) -> None:
    result = run_cli("scaffold", "proxy", tmp_path / "p", "--schema", "acp_v2")
    assert_one_error_line(result, "incompatible-schema")
    assert "proxy/initialize" in result.stderr and not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    "protocol", ["1", pytest.param("2", marks=pytest.mark.slow)]
)  # 2: nox -s slow
def test_a_one_version_agent_passes_its_own_tests(tmp_path: Path, protocol: str) -> None:
    project = tmp_path / f"only_v{protocol}"
    result = run_cli("scaffold", "agent", project, "--protocol", protocol)
    assert result.returncode == 0, result.describe()
    package = project / project.name
    assert (package / "agent_v1.py").exists() == (protocol == "1")
    assert (package / "acp").exists() == (protocol == "2") and (package / "acp_v1").exists() == (
        protocol == "1"
    )
    done = run_project_tests(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b\d+ passed\b", done.stdout) and "failed" not in done.stdout, done.stdout


@pytest.mark.slow  # nox -s slow: the CI budget leaves it out
def test_an_agent_on_the_stable_v2_schema_passes_its_own_tests(tmp_path: Path) -> None:
    project = tmp_path / "stable"
    result = run_cli("scaffold", "agent", project, "--schema", "acp_v2")
    assert result.returncode == 0, result.describe()
    assert "#schema/v2/schema.json" in result.stdout
    done = run_project_tests(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b\d+ passed\b", done.stdout) and "failed" not in done.stdout, done.stdout


def test_the_remote_extra_of_projects_is_the_runtimes_own() -> None:
    import tomllib

    from acp_codegen.scaffold.project import REMOTE_DEPENDENCIES

    pyproject = tomllib.loads(
        (Path(__file__).parents[2] / "runtime" / "pyproject.toml").read_text(encoding="utf-8")
    )
    assert list(REMOTE_DEPENDENCIES) == pyproject["project"]["optional-dependencies"]["remote"]


def test_without_vendoring_a_project_depends_on_the_runtime(tmp_path: Path) -> None:
    from acp_codegen.runtime_dist import runtime_versions

    result = run_cli(
        "scaffold", "agent", tmp_path / "lean", "--protocol", "2", "--no-vendor-runtime"
    )
    assert result.returncode == 0, result.describe()
    assert not (tmp_path / "lean" / "acp_runtime").exists()
    pyproject = (tmp_path / "lean" / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"acp-runtime{runtime_versions()}"' in pyproject
    assert f'"acp-runtime[remote]{runtime_versions()}"' in pyproject
    assert "acp_runtime" not in pyproject.split("[tool.setuptools]")[1].split("[tool.pytest")[0]
    readme = (tmp_path / "lean" / "README.md").read_text(encoding="utf-8")
    assert "--vendor-runtime" not in readme


def test_projects_require_the_pydantic_acp_codegen_requires() -> None:
    """A project's pydantic bound is acp-codegen's own: the lowest minor `nox -s pydantic` tests."""
    import tomllib

    from acp_codegen.scaffold.project import DEPENDENCIES

    pyproject = tomllib.loads(
        (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    )
    ours = [d for d in pyproject["project"]["dependencies"] if d.startswith("pydantic")]
    assert [d for d in DEPENDENCIES["agent"] if d.startswith("pydantic")] == ours
    assert [d for d in DEPENDENCIES["client"] if d.startswith("pydantic")] == ours


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("agent", "echo/agent_v1.py"),
        ("agent", "echo/agent_v2.py"),
        ("agent", "tests/test_agent.py"),
        ("agent", "tests/test_agent_v1.py"),
        ("client", "viewer/client.py"),
        ("client", "tests/fake_agent.py"),
        ("client", "tests/fake_agent_v1.py"),
        ("proxy", "ctx/proxy.py"),
        ("proxy", "tests/echo_agent.py"),
    ],
)
def test_the_projects_send_typed_models_not_wire_dicts(
    made: dict[str, tuple[Path, CliResult]], kind: str, path: str
) -> None:
    # Outbound messages are built with the builders and models (`peer.session(id).<variant>`,
    # `agent.session_prompt(id, "text")`); a wire-form update is left only where no typed form
    # exists (the fake agent's custom `_` variant). v1.py translates received v1 updates through
    # their wire form on purpose: the two versions' models are different classes.
    text = (made[kind][0] / path).read_text(encoding="utf-8")
    sent = [
        line for line in text.splitlines() if not line.lstrip().startswith("assert")
    ]  # received: as is
    wire = [line for line in sent if '{"sessionUpdate"' in line and '"_fake_extension"' not in line]
    assert wire == []
    assert [line for line in sent if ".from_dict(" in line and "(custom)" not in line] == []


@pytest.mark.parametrize("kind", ["agent", "client", "proxy"])
def test_the_project_lists_every_package_it_ships(
    made: dict[str, tuple[Path, CliResult]], kind: str
) -> None:
    """setuptools ships only the packages `[tool.setuptools] packages` names: each directory with
    an `__init__.py` (the bindings' `_models` groups too) must be there, or a wheel lacks it."""
    import tomllib

    project, result = made[kind]
    assert result.returncode == 0, result.describe()
    listed = set(
        tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
            "setuptools"
        ]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(project).parts)
        for p in project.rglob("__init__.py")
        if "tests" not in p.relative_to(project).parts
    }
    assert any(name.endswith("._models") for name in found)
    assert found == listed


def test_listen_prints_the_urls_it_serves(made: dict[str, tuple[Path, CliResult]]) -> None:
    """`my-agent --listen HOST:PORT` says where remote clients connect (item 7 of issue 34)."""
    import socket
    import time

    project, result = made["agent"]
    assert result.returncode == 0, result.describe()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    env = {**os.environ, "PYTHONPATH": str(project)}
    process = subprocess.Popen(
        [sys.executable, "-m", "echo", "--listen", f"127.0.0.1:{port}"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line == (
            f"echo: serving ACP at ws://127.0.0.1:{port}/acp (WebSocket) and "
            f"http://127.0.0.1:{port}/acp (Streamable HTTP)\n"
        ), line
        deadline = time.monotonic() + 30  # a guard against a hang, not a measurement
        while True:  # the printed address accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
                time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_agent_is_its_turn_on_the_runtime_in_at_most_250_lines(
    made: dict[str, tuple[Path, CliResult]],
) -> None:
    # Issue 31: the runtime runs the prompt lifecycle; the project's own code (outside its
    # bindings, the vendored runtime and the tests) is its echo turn and its command line.
    project, result = made["agent"]
    assert result.returncode == 0, result.describe()
    own = sorted((project / "echo").glob("*.py"))
    assert {p.name for p in own} == {
        "__init__.py",
        "__main__.py",
        "agent.py",
        "agent_v1.py",
        "agent_v2.py",
        "echo.py",
    }
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in own)
    assert lines <= 250, lines
    assert all(
        "TurnAgent" in (project / "echo" / name).read_text(encoding="utf-8")
        for name in ("agent_v1.py", "agent_v2.py")
    )


def test_a_proxy_speaks_v2_only_through_the_api(tmp_path: Path) -> None:
    from acp_codegen.api import scaffold_project
    from acp_codegen.errors import CodegenError

    with pytest.raises(CodegenError, match="a proxy speaks ACP v2 only"):
        scaffold_project("proxy", tmp_path / "p", protocols=(1, 2))
    assert not (tmp_path / "p").exists()
