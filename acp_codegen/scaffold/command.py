"""The `acp-codegen scaffold agent|client|proxy DIR` commands: options in, summary out. No logic
here (`acp_codegen.api.scaffold_project` does it).

Exit status: 0 when the project was written, 2 on any problem (one line per diagnostic on
stderr, nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from acp_codegen.cli_help import epilog
from acp_codegen.errors import CodegenError
from acp_codegen.ui import Reporter

if TYPE_CHECKING:  # the rendering stack is imported when a project is scaffolded, not at CLI start
    from acp_codegen.scaffold.bindings import Kind

scaffold_app = typer.Typer(
    no_args_is_help=True,
    help="Start a new ACP agent, client or proxy project built on generated bindings.",
)

DirArgument = Annotated[
    Path,
    typer.Argument(
        metavar="DIR",
        help="Directory to create the project in (must be empty).",
        show_default=False,
    ),
]
NameOption = Annotated[
    str | None,
    typer.Option(
        "--name", help="Project name (default: DIR's name), normalised to a package name."
    ),
]
SchemaOption = Annotated[
    str | None,
    typer.Option(
        "--schema",
        help=(
            "Schema for the bindings: path, URL, npm:..., github:... or a pinned target name "
            "(default: the default pin)."
        ),
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option("--force", help="Write into a non-empty DIR, replacing files of the same name."),
]
ProtocolOption = Annotated[
    int | None,
    typer.Option(
        "--protocol",
        help=(
            "Speak only this ACP protocol version (1 or 2; default: both, routed by the first "
            "initialize). A v1-only client keeps the v2 bindings as its display model."
        ),
    ),
]
V1SchemaOption = Annotated[
    str | None,
    typer.Option(
        "--v1-schema",
        help=(
            "Schema for the v1 bindings next to v2 (default: the pinned acp_v1); "
            "--schema is for v2."
        ),
    ),
]
PinsOption = Annotated[
    Path | None,
    typer.Option("--pins", help="Pin file for target names (default: schema/pins.toml)."),
]
CiInstallOption = Annotated[
    str | None,
    typer.Option(
        "--ci-install-from",
        metavar="SOURCE",
        help=(
            "Where the project's CI workflow installs acp-codegen (as `ci github --install-from`; "
            "default: where this acp-codegen came from)."
        ),
        show_default=False,
    ),
]
VendorOption = Annotated[
    bool,
    typer.Option(
        "--vendor-runtime/--no-vendor-runtime",
        help=(
            "Write one copy of the runtime (acp_runtime/) into the project (the default: it "
            "installs offline), or depend on acp-runtime."
        ),
    ),
]


def _run(
    kind: Kind,
    directory: Path,
    name: str | None,
    schema: str | None,
    force: bool,
    pins: Path | None,
    protocol: int | None,
    v1_schema: str | None,
    vendor: bool,
    ci_install_from: str | None,
) -> None:
    from acp_codegen.api import scaffold_project
    from acp_codegen.scaffold.bindings import default_protocols
    from acp_codegen.scaffold.project import INSTALL_COMMAND, TEST_COMMAND
    from acp_codegen.upgrade.ci_install import default_install_source, parse_install_from

    reporter = Reporter()
    # a proxy has no --protocol: the proxy methods are v2's
    protocols = default_protocols(kind) if protocol is None else (protocol,)
    try:
        install = (
            parse_install_from(ci_install_from, directory)
            if ci_install_from is not None
            else default_install_source(directory)
        )
        with reporter.progress():
            done = scaffold_project(
                kind,
                directory,
                name=name,
                schema=schema,
                v1_schema=v1_schema,
                protocols=protocols,
                force=force,
                vendor_runtime=vendor,
                pins=pins,
                ci_install_from=install,
            )
    except CodegenError as error:
        reporter.diagnostics(error.diagnostics)
        raise typer.Exit(2) from None
    for warning in install.warnings:
        reporter.note(f"warning: {warning}")
    reporter.summary(
        f"created {kind} project {done.names.dist} in {done.directory} "
        f"({len(done.files)} files; bindings from {done.source})"
    )
    reporter.summary(f"next: cd {done.directory} && {INSTALL_COMMAND} && {TEST_COMMAND}")


@scaffold_app.command("agent", epilog=epilog("scaffold agent"))
def agent(
    directory: DirArgument,
    name: NameOption = None,
    schema: SchemaOption = None,
    force: ForceOption = False,
    pins: PinsOption = None,
    protocol: ProtocolOption = None,
    v1_schema: V1SchemaOption = None,
    vendor: VendorOption = True,
    ci_install_from: CiInstallOption = None,
) -> None:
    """Create an echo agent project serving ACP v1 and v2 (bindings, shared echo logic, one agent per version, tests, README)."""  # noqa: E501 - typer prints it as the help, line breaks included
    _run(
        "agent", directory, name, schema, force, pins, protocol, v1_schema, vendor, ci_install_from
    )


@scaffold_app.command("client", epilog=epilog("scaffold client"))
def client(
    directory: DirArgument,
    name: NameOption = None,
    schema: SchemaOption = None,
    force: ForceOption = False,
    pins: PinsOption = None,
    protocol: ProtocolOption = None,
    v1_schema: V1SchemaOption = None,
    vendor: VendorOption = True,
    ci_install_from: CiInstallOption = None,
) -> None:
    """Create a terminal client project that runs a v1 or v2 agent command and streams one prompt."""  # noqa: E501 - typer prints it as the help, line breaks included
    _run(
        "client", directory, name, schema, force, pins, protocol, v1_schema, vendor, ci_install_from
    )


@scaffold_app.command("proxy", epilog=epilog("scaffold proxy"))
def proxy(
    directory: DirArgument,
    name: NameOption = None,
    schema: SchemaOption = None,
    force: ForceOption = False,
    pins: PinsOption = None,
    vendor: VendorOption = True,
    ci_install_from: CiInstallOption = None,
) -> None:
    """Create an ACP v2 proxy project that adds a context block to each prompt, run by acp-conductor in front of any agent."""  # noqa: E501 - typer prints it as the help, line breaks included
    _run("proxy", directory, name, schema, force, pins, None, None, vendor, ci_install_from)
