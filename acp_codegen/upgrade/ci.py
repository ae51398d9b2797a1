"""`acp-codegen ci github`: the drift-CI workflow for a project that tracks pinned ACP schemas.

Owns the values the workflow template (`templates/ci/github.yml.jinja`, shared with the scaffolded
projects) is rendered with, checking the pin file it names, and writing the workflow atomically;
where the workflow installs the toolkit from is `acp_codegen.upgrade.ci_install`'s.
"""

from __future__ import annotations

from pathlib import Path

from acp_codegen import __version__
from acp_codegen.errors import fail
from acp_codegen.pins import load_pins
from acp_codegen.render.package import environment
from acp_codegen.upgrade.ci_install import InstallSource, default_install_source
from acp_codegen.upgrade.pinedit import write_text_atomic

DEFAULT_WORKFLOW = Path(".github") / "workflows" / "acp-codegen.yml"
TEMPLATE = "ci/github.yml.jinja"


def _shell_word(text: str) -> str:
    """A path as one shell word (quoted only when it needs to be)."""
    if text and all(ch.isalnum() or ch in "._/-" for ch in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def render_github_workflow(
    pins: Path,
    *,
    out: Path | None = None,
    install: InstallSource | None = None,
    project_root: Path | None = None,
    written_by: str = "`acp-codegen ci github`",
    check_pins: bool = True,
) -> str:
    """The workflow YAML for a project whose targets are in `pins` (relative to the project root,
    `project_root`, default the current directory). `out`: the output directory the commands pass
    (None: the pin file's own). `install`: where CI gets the toolkit (default: where it came from
    here, `default_install_source`)."""
    root = project_root or Path.cwd()
    if check_pins:
        load_pins(
            pins if project_root is None else root / pins
        )  # the workflow must name a pin file that loads
    words = {"pins": _shell_word(pins.as_posix())}
    out_option = "" if out is None else f" --out {_shell_word(out.as_posix())}"
    context = {
        "generator_version": __version__,
        "written_by": written_by,
        "install": install or default_install_source(root),
        "generate_check": f"acp-codegen generate --check --pins {words['pins']}{out_option}",
        "outdated": f"acp-codegen outdated --pins {words['pins']}",
        "out_option": out_option,
        **words,
    }
    return environment().get_template(TEMPLATE).render(context)


def write_workflow(text: str, path: Path) -> bool:
    """Write the workflow (atomically); False when the file already had exactly this text."""
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    except OSError as exc:
        raise fail(
            "write-failed", f"cannot write the workflow: {exc.strerror or exc}", file=str(path)
        ) from None
    return True
