"""`acp_codegen.black_stable`: a piece it calls black-stable is one black leaves unchanged.

The format stage skips black for such pieces, so a wrong True would put a layout black would not
produce into a generated package (and the committed goldens would drift from black). The
evidence, all against black itself:

- the corpus: every rendered file of every schema revision of the shared directory, of the pinned
  targets and of a hostile schema (quotes, backslashes, wide characters, long names and
  descriptions), cut into single statements, into the format stage's pieces and taken whole;
- near misses: accepted pieces changed the ways black would undo (spacing, quotes, blank lines,
  indentation, joined or split brackets, trailing commas, comments, long rows);
- hand-written shapes at the edges of black's rules.

A True must always be black's output; a False is only a missed shortcut, but the share of the
draft's model text accepted is held too (without it the format stage is no faster than black).
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import black
import pytest
from generator_support import minimal, ping

from acp_codegen.black_stable import is_black_stable
from acp_codegen.fmt import black_mode, split_pieces
from acp_codegen.pins import PinFile
from acp_codegen.pipeline import ir_for
from acp_codegen.render.package import render_model_modules, render_templates
from acp_codegen.sources import default_shared_dir


def _black(text: str) -> str | None:
    try:
        return black.format_str(text, mode=black_mode())
    except Exception:  # noqa: BLE001 - black's errors for invalid code are several types
        return None


def _statements(text: str) -> Iterator[str]:
    """Every top-level statement of `text` on its own (with what follows it up to the next)."""
    body = ast.parse(text).body
    rows = text.splitlines(keepends=True)
    starts = [0] + [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) - 1 for n in body[1:]]
    for start, end in zip(starts, [*starts[1:], len(rows)], strict=True):
        yield "".join(rows[start:end]).rstrip() + "\n"


def _rendered(source: str, package: str, sha256: str | None = None) -> dict[str, str]:
    """The rendered, unformatted Python files of one package."""
    protocol = ir_for(source, sha256)
    files = {k: v for k, v in render_templates(protocol, package).items()}
    files.update(render_model_modules(protocol, package, None)[0])
    return {k: v for k, v in files.items() if k.endswith(".py")}


def _hostile() -> dict[str, Any]:
    schema = minimal()
    request = ping(schema)
    request["description"] = (
        'Ends in a quote "x"\n\nA "quoted" word, a backslash \\ and \\n, triple """ quotes, '
        "a wide 名前 name, an emoji \U0001f600, trailing spaces   \n" + "w" * 120
    )
    props = request["properties"]
    props["a_property_whose_name_alone_is_long_enough_to_push_its_annotated_line_past_the_limit"] = {
        "type": "string",
        "description": "\"Starts with a quote.",
        "default": "a default with 'single' and \"double\" quotes",
    }
    props["n"] = {"type": "integer", "default": 0, "description": "   indented first line\n\n\tand a tab"}
    props["choice"] = {"enum": ["it's", 'say "hi"', "back\\slash", "x" * 90]}
    props["nested"] = {"type": "object", "default": {"k": [1, 2, {"deep": None}]}, "additionalProperties": True}
    return schema


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, pinned_sources: PinFile) -> dict[str, str]:
    """piece text -> where it came from (first seen), deduplicated over every source."""
    draft = pinned_sources.default_pin
    sources: list[tuple[str, str, str | None]] = [(draft.source, draft.package, draft.sha256)]
    shared = default_shared_dir()
    manifest = shared / "manifest.json"
    if manifest.is_file():
        for revision in json.loads(manifest.read_text(encoding="utf-8"))["revisions"]:
            for name, sha in sorted(revision["files"].items()):
                if name.startswith("meta"):
                    continue
                sources.append((str(shared / revision["id"] / name), "rev", sha))
    hostile = tmp_path_factory.mktemp("hostile") / "schema.json"
    hostile.write_text(json.dumps(_hostile()), encoding="utf-8")
    sources.append((str(hostile), "hostile", None))
    pieces: dict[str, str] = {}
    for source, package, sha in sources:
        for path, text in _rendered(source, package, sha).items():
            where = f"{source}:{path}"
            for piece in [text, *split_pieces(text, min_bytes=0), *_statements(text)]:
                pieces.setdefault(piece, where)
    return pieces


def _black_identity_input(text: str) -> str:
    """`text` if black leaves it unchanged, else black's output (or "" when black refuses)."""
    return _black(text) or ""


def test_every_accepted_piece_and_near_miss_is_blacks_output(corpus: dict[str, str]) -> None:
    """One test (the corpus is built once per worker): the corpus, then its near misses."""
    accepted = [piece for piece in corpus if is_black_stable(piece)]
    assert len(accepted) > 1000, f"only {len(accepted)} of {len(corpus)} pieces accepted"
    # the models facades are taken as black's output whole (`render_model_modules`' heads)
    accepted += [p for p, where in corpus.items() if where.endswith(":models.py") and p.startswith("# Generated")]
    cases = _near_misses(accepted)
    missed = [(name, text) for name, text in cases if is_black_stable(text)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_black_identity_input, accepted + [t for _, t in missed], chunksize=64))
    wrong = [(corpus[p], p) for p, out in zip(accepted, results, strict=False) if out != p]
    assert not wrong, f"{len(wrong)} accepted pieces black changes; first, from {wrong[0][0]}:\n{wrong[0][1]}"
    wrong_misses = [(name, t) for (name, t), out in zip(missed, results[len(accepted) :], strict=True) if out != t]
    assert not wrong_misses, (
        f"{len(wrong_misses)} near misses accepted that black changes; first ({wrong_misses[0][0]}):\n{wrong_misses[0][1]}"
    )
    for _, text in missed:
        ast.parse(text)  # an accepted text is always valid Python (black is skipped for it)
    kinds = {name for name, _ in cases}
    assert kinds == set(_MUTATIONS), f"mutations that never applied: {set(_MUTATIONS) - kinds}"
    assert len(missed) < len(cases) / 2, "most near misses are changes black undoes: they must be rejected"


def test_most_of_the_drafts_model_text_is_accepted(pinned_sources: PinFile) -> None:
    draft = pinned_sources.default_pin
    models, heads = render_model_modules(ir_for(draft.source, draft.sha256), draft.package, None)
    bodies = [text.removeprefix(heads.get(path, "")).lstrip("\n") for path, text in models.items()]
    total = sum(map(len, bodies))
    accepted = sum(len(p) for text in bodies for p in split_pieces(text, min_bytes=0) if is_black_stable(p))
    assert accepted >= 0.8 * total, f"{accepted} of {total} model bytes accepted (the format stage relies on most)"


# --- near misses -----------------------------------------------------------------------------

_MUTATIONS = {
    "extra space": lambda t, r: _at(t, r, r"(?<=\S) (?=\S)", "  "),
    "space dropped after a comma": lambda t, r: _at(t, r, r", ", ","),
    "space before a comma": lambda t, r: _at(t, r, r",", " ,"),
    "space inside a bracket": lambda t, r: _at(t, r, r"[(\[{](?=\S)", lambda m: m.group() + " "),
    "spaces around a keyword =": lambda t, r: _at(t, r, r"(?<=\w)=(?=\w)", " = "),
    "no spaces around =": lambda t, r: _at(t, r, r" = ", "="),
    "single quotes": lambda t, r: _at(t, r, r'"([^"\n]*)"', lambda m: f"'{m.group(1)}'"),
    "trailing comma on one row": lambda t, r: _at(t, r, r"(?<=\w)\)", ",)"),
    "a bracket joined onto one row": lambda t, r: _at(t, r, r"\(\n\s+", "("),
    "a row split after a comma": lambda t, r: _at(t, r, r", ", ",\n    "),
    "a blank line removed": lambda t, r: _at(t, r, r"\n\n", "\n"),
    "a blank line added": lambda t, r: _at(t, r, r"\n(?=\S)", "\n\n"),
    "two blank lines added": lambda t, r: _at(t, r, r"\n\n(?=\s)", "\n\n\n"),
    "a row indented further": lambda t, r: _at(t, r, r"\n(?= )", "\n    "),
    "a row dedented": lambda t, r: _at(t, r, r"\n    ", "\n"),
    "an inline comment, one space": lambda t, r: _at(t, r, r"(?<=[\w)\]])\n", " # note\n"),
    "an inline comment without a space": lambda t, r: _at(t, r, r"(?<=[\w)\]])\n", "  #note\n"),
    "a comment on its own row": lambda t, r: _at(t, r, r"\n(?=\s*\S)", "\n# note\n"),
    "trailing whitespace": lambda t, r: _at(t, r, r"(?<=\S)\n", " \n"),
    "a long name": lambda t, r: _at(t, r, r"\b[a-z_]{4,}\b", lambda m: m.group() + "_" * 90),
    "a wide name": lambda t, r: _at(t, r, r"\b[a-z_]{4,}\b", lambda m: m.group() + "名" * 30),
    "a docstring's closing quotes on their own row": lambda t, r: _at(t, r, r'(?<=\S)"""', '\n"""'),
    "a docstring with a leading space": lambda t, r: _at(t, r, r'"""(?=\S)', '""" '),
    "parentheses around a value": lambda t, r: _at(t, r, r"= (\w+)\n", lambda m: f"= ({m.group(1)})\n"),
    "a tab": lambda t, r: _at(t, r, r"\n    ", "\n\t"),
    "a backslash continuation": lambda t, r: _at(t, r, r" = ", " = \\\n    "),
    "a hex number": lambda t, r: _at(t, r, r"\b\d+\b", "0XAB"),
}


def _at(text: str, rng: random.Random, pattern: str, replacement: Any) -> str | None:
    """`text` with one match of `pattern` (chosen by `rng`) replaced; None without a match."""
    matches = list(re.finditer(pattern, text))
    if not matches:
        return None
    match = rng.choice(matches)
    new = replacement(match) if callable(replacement) else replacement
    return text[: match.start()] + new + text[match.end() :]


def _near_misses(accepted: list[str]) -> list[tuple[str, str]]:
    """(mutation, text): accepted pieces, each changed once or twice by every mutation."""
    rng = random.Random(20261205)
    small = sorted(p for p in accepted if len(p) < 6000)
    sample = rng.sample(small, min(400, len(small)))
    out: list[tuple[str, str]] = []
    for piece in sample:
        for name, mutate in _MUTATIONS.items():
            for _ in range(2):
                mutated = mutate(piece, rng)
                if mutated is not None and mutated != piece:
                    out.append((name, mutated))
    return out


# --- hand-written edges ----------------------------------------------------------------------

_EDGES = [
    "x = 1\n",
    "x = (1)\n",
    "x = [1,]\n",
    "x = [\n    1,\n]\n",
    "x = [\n    1\n]\n",
    "x: tuple[int,] = (1,)\n",
    "x = f(\n    a,\n)\n",
    "x = f(a)(\n    b,\n)\n",
    "x = a.f(\n    b,\n)\n",
    "x = y = f(\n    a,\n)\n",
    "x = f(\n    [\n        a,\n    ]\n)\n",
    "x = f(\n    k=[\n        a,\n    ]\n)\n",
    "x = f(\n    k=[\n        a,\n    ],\n)\n",
    'x = {\n    "k": f(\n        a,\n    ),\n}\n',
    "x: A[\n    B,\n    C,\n] = None\n",
    "x: A[\n    B,\n] = None\n",
    "x: A[\n    B,\n    C,\n] = a.b.c\n",
    "x: A[\n    B,\n    C,\n] = f()\n",
    "x: A[\n    B,\n    C,\n]\n",
    "def f(a, b,): pass\n",
    "def f(a, b): ...\n",
    "def f(a, b):\n    return a\n",
    "def f(a, b):\n\n    return a\n",
    "def f(a, b):\n    x = 1\n\n    return x\n",
    "def f(a, b):\n    x = 1\n\n\n    return x\n",
    "def f(a=1, *, b: int = 2, **kw: int) -> int:\n    return a\n",
    "def f(a = 1):\n    return a\n",
    "async def f() -> None:\n    pass\n",
    "class A:\n    x = 1\n",
    "class A:\n\n    x = 1\n",
    "class A:\n    x = 1\n    y = 2\n",
    "class A:\n    x = 1\n\n\n    y = 2\n",
    'class A:\n    """Doc."""\n    x = 1\n',
    'class A:\n    """Doc."""\n\n    x = 1\n',
    'class A:\n    """ Doc."""\n\n    x = 1\n',
    'class A:\n    """Doc.\n\n    More.\n    """\n\n    x = 1\n',
    'class A:\n    """Doc.\n\n      More.   \n    """\n\n    x = 1\n',
    'class A:\n    x = 1\n    """Doc of x."""\n\n    y = 2\n',
    "class A:\n    x = 1\n    def f(self):\n        pass\n",
    "class A:\n    x = 1\n\n    def f(self):\n        pass\n    y = 2\n",
    "class A:\n    x = 1\n\n    def f(self):\n        pass\n\n    y = 2\n",
    "class A:\n    def f(self):\n        def g():\n            pass\n        return g\n",
    "class A:\n    @property\n    def f(self) -> int:\n        return 1\n",
    "class A:\n    @property\n\n    def f(self) -> int:\n        return 1\n",
    "class A(B, metaclass=M):\n    pass\n",
    "class A(B, metaclass = M):\n    pass\n",
    "class A():\n    pass\n",
    "x = 1\nclass A:\n    pass\n",
    "x = 1\n\n\nclass A:\n    pass\n",
    "class A:\n    pass\nx = 1\n",
    "class A:\n    pass\n\n\nx = 1\n",
    "x = 1\ny = 2\n",
    "x = 1\n\n\n\ny = 2\n",
    "import a\nx = 1\n",
    "import a\n\nx = 1\n",
    "import a\n\n\nx = 1\n",
    "import a\nimport b\n",
    "import a,b\n",
    "from . import a\n",
    "from .. x import a\n",
    "from x import (a)\n",
    "from x import (\n    a,\n    b,\n)\n",
    "from x import (\n    a,\n    b\n)\n",
    "from x import *  # noqa: F403\n",
    "from x import *  #noqa\n",
    "from x import * # noqa\n",
    "x = 1  # type: int\n",
    "# fmt: off\nx = [1,2]\n",
    "# note\nx = 1\n",
    "x = 1\n# note\n\n\ndef f():\n    pass\n",
    "x = 1\n\n\n# note\ndef f():\n    pass\n",
    "@d\n# note\ndef f():\n    pass\n",
    '"""Module."""\nx = 1\n',
    '"""Module."""\n\nx = 1\n',
    '"""Module."""\n\n\nx = 1\n',
    '"""Module."""\n\n\nclass A:\n    pass\n',
    '"""Module."""\n\nclass A:\n    pass\n',
    '# c\n"""Module."""\n\nx = 1\n',
    "x = -1\n",
    "x = - 1\n",
    "x = a | b\n",
    "x = a|b\n",
    "x: int | None = None\n",
    "x = f(*a, **k)\n",
    "x = f(* a)\n",
    "x = {**a}\n",
    "x = a[1:2]\n",
    "x = 1.50\n",
    "x = 007\n",
    "x = 1_000\n",
    "x = 0xab\n",
    "x = 1e5\n",
    'x = "a" "b"\n',
    'x = b"a"\n',
    "x = 'a'\n",
    'x = "\\n"\n',
    "x = lambda: 1\n",
    "x = not y\n",
    "x = y if z else w\n",
    "x = [y for y in z]\n",
    "return x\n",
    "def f():\n    return(x)\n",
    "def f():\n    return (x)\n",
    "pass\n",
    "x = ...\n",
    "x = f(a, b)[0]\n",
    "x = a.b.c\n",
    "x = a. b\n",
    "x = (\n    1\n)\n",
    "if x:\n    pass\n",
    "x = 1;\n",
    "x = 1; y = 2\n",
    "\nx = 1\n",
    "x = 1\n\n",
    "x = 1",
    " x = 1\n",
    "x = 1 \n",
    "x = 1\r\n",
    "x = '''a'''\n",
    'x = """a"""\n',
    "x=1\n",
    "x = f (a)\n",
    "x = f(a) [0]\n",
    "x = {\"a\": 1}\n",
    "x = {\"a\" : 1}\n",
    "x = {\"a\":1}\n",
    "x = [1 , 2]\n",
    "x = [1,2]\n",
    "def f(a : int) -> int:\n    return a\n",
    "def f(a:int)->int:\n    return a\n",
    "def f(a: int)-> int:\n    return a\n",
    "x = " + "a" * 97 + "\n",
    "x = " + "a" * 96 + "\n",
    "x = f(\n    " + "a" * 97 + ",\n)\n",
    "x = f(\n    " + "a" * 94 + ",\n)\n",
    "x = f(" + "a" * 100 + ")\n",
    "x = \"" + "名" * 47 + "\"\n",
    "x = \"" + "名" * 48 + "\"\n",
]


@pytest.mark.parametrize("text", _EDGES, ids=[repr(t)[:60] for t in _EDGES])
def test_edge_shapes_are_accepted_only_if_black_leaves_them(text: str) -> None:
    if is_black_stable(text):
        assert _black(text) == text
        ast.parse(text)


def test_the_edges_exercise_both_answers() -> None:
    answers = {is_black_stable(text) for text in _EDGES}
    assert answers == {True, False}
    stable_by_black = [text for text in _EDGES if _black(text) == text]
    accepted = [text for text in stable_by_black if is_black_stable(text)]
    assert len(accepted) >= len(stable_by_black) / 2, "most black-stable edges should be recognised"
