"""`acp_codegen.render.layout`: the long lines the templates write, laid out as black lays them out
(so that black's first pass changes nothing and it skips its second)."""

from __future__ import annotations

import black
import pytest

from acp_codegen.fmt import black_mode
from acp_codegen.render.layout import black_line


def _in_context(text: str, indent: int) -> str:
    """`text` (rows at `indent`) where such rows can stand: in a class, in a method."""
    opening = {0: "", 4: "class C:\n", 8: "class C:\n    async def f(self):\n", 12: "class C:\n    async def f(self):\n        if x:\n"}
    body = "\n" + " " * (indent + 4) + "pass" if text.rstrip().endswith(":") else ""
    return opening[indent] + text + body + "\n"


LONG = "a_rather_long_parameter_name"
SHAPES = [
    # a def: on one row, its parameters on one row of their own, one a row (with `*`, a stub body)
    ("async def short(self, params: Request) -> Response:", 4),
    ("async def session_set_config_option(self, params: SetSessionConfigOptionRequest) -> SetSessionConfigOptionResponse:", 4),
    (f"async def f(self, {LONG}: int, {LONG}_2: str, *, {LONG}_3: Sequence[int] | None = None) -> None: ...", 4),
    ("def _as_items(value: Sequence[ContentBlockWithAVeryLongName | str] | ContentBlockWithAVeryLongName | str) -> list[X]:", 0),
    # a parameter too long for its row: its annotation parenthesized, split before each `|`
    ("async def update(self, tool_call_id: ToolCallId, *, kind: ToolKind | Literal[\"read\", \"edit\", \"delete\", \"move\", \"search\", \"execute\", \"think\", \"fetch\", \"switch_mode\", \"other\"] | None = None, status: ToolCallStatus | Literal[\"pending\", \"in_progress\", \"paused\", \"completed\", \"failed\", \"cancelled\"] | None = None) -> None:", 4),
    # a call: its arguments on a row, a lone argument split again, one a row, a display exploded
    ("result: CreateElicitationResponse = await self.connection.request(\"elicitation/create\", params, _models.CreateElicitationResponse)", 8),
    ("await self.peer.session_update(_models.UpdateSessionNotification(session_id=self.session_id, update=update))", 8),
    ("await self.send(build(_models.SessionUpdateUserMessageChunk, (content, message_id), {\"meta\": meta}, (\"content\", \"message_id\"), {\"content\": _as_content_block}))", 8),
    ("await self.send(build(_models.SessionUpdateStateUpdateIdleNone, (), {\"usage\": usage, \"background\": background, \"meta\": meta, \"stop_reason\": stop_reason}, (), {}))", 8),
    ("params = build(_models.CompleteElicitationNotification, args, kwargs, (\"elicitation_id\",), {})", 8),
    # a value with operators: parenthesized, on a row of its own or split before each `|`
    ("entity.output = bytearray() if update.output is None else bytearray(_decode(update.output.data))", 12),
    ("TimelineEntity: TypeAlias = TimelineMessage | TimelineToolCall | TimelineTerminal | TimelineCompaction | TimelineSubagent | TimelinePlan", 0),
    ("Short: TypeAlias = A | B", 0),
]


@pytest.mark.parametrize(("line", "indent"), SHAPES, ids=[line[:40] for line, _ in SHAPES])
def test_each_shape_is_laid_out_as_black_lays_it_out(line: str, indent: int) -> None:
    source = _in_context(black_line(line, indent), indent)
    assert black.format_str(source, mode=black_mode()) == source


def test_long_shapes_are_split_and_short_ones_left_on_one_row() -> None:
    for line, indent in SHAPES:
        rows = black_line(line, indent).split("\n")
        assert all(len(row) <= 100 for row in rows), line
        assert (len(rows) == 1) == (indent + len(line) <= 100), line


@pytest.mark.parametrize(
    "line",
    [
        "x = [item for item in a_rather_long_iterable_name_that_goes_on if item is not None and item.is_ok()]  # c",
        "value = some_function_name_that_is_long(argument_number_one)[index_number_one_that_is_long:index_two]",
        "value = 'a string with a \\' quote' + another_rather_long_name + yet_another_rather_long_name_for_it",
        "résultat = une_fonction_avec_un_nom_assez_long(argument_numéro_un, argument_numéro_deux, trois)",
    ],
)
def test_lines_it_does_not_know_are_left_as_written(line: str) -> None:
    assert black_line(line, 8) == " " * 8 + line


def test_every_templated_piece_of_the_draft_is_left_unchanged_by_black(pinned_sources: object) -> None:
    """The speed-up holds: black's first pass changes no piece of the templated modules, so it
    runs once, not twice."""
    from acp_codegen.fmt import split_pieces
    from acp_codegen.pins import PinFile
    from acp_codegen.pipeline import ir_for
    from acp_codegen.render.package import render_templates

    assert isinstance(pinned_sources, PinFile)
    target = pinned_sources.default_pin
    files = render_templates(ir_for(target.source, target.sha256), target.package)
    changed = [
        (name, piece.split("\n")[0])
        for name, text in files.items()
        if name.endswith(".py")
        for piece in split_pieces(text, min_bytes=0)
        if black.format_str(piece, mode=black_mode()) != piece
    ]
    assert not changed, changed
