"""Spacing of `acp_codegen.black_stable`: the whitespace black puts before each token of a line."""

from __future__ import annotations

import keyword

from acp_codegen.black_stable.tokens import CLOSERS, OPENERS, Token

WORDS = frozenset(
    {"class", "def", "async", "return", "pass", "if", "not", "None", "True", "False"}
)
ATOM_KINDS = frozenset({"name", "num", "str", "str3"})


def spacing_ok(tokens: list[Token]) -> bool:
    """Every token is one black knows here, spaced on its row as black spaces it."""
    brackets: list[tuple[str, str]] = []  # (opener, role): call, sub, list, dict, params, bases
    word = tokens[0].text
    annotated = False  # in a `def`'s parameters: the current parameter has an annotation
    previous: Token | None = None
    for index, token in enumerate(tokens):
        text, kind = token.text, token.kind
        if kind == "str3":
            return False  # a multi-row string inside a statement: black's rules are its own
        if kind == "name" and keyword.iskeyword(text) and text not in WORDS:
            return False
        if kind == "name" and text in WORDS - {"None", "True", "False"} and not _word_ok(tokens, index):
            return False
        expected = _space(previous, token, brackets, word, annotated, index)
        if expected is None:
            return False
        if not token.starts_row and token.space != expected:
            return False
        after_separator = previous is None or previous.text in OPENERS or previous.text == ","
        if token.starts_row and index and not after_separator and text not in CLOSERS and text != "|":
            return False  # a row may only start after an opener or a comma, or with a `|`
        if text in OPENERS:
            brackets.append((text, _role(previous, text, word, brackets)))
            annotated = False
        elif text in CLOSERS:
            opener, _ = brackets.pop()
            if OPENERS[opener] != text:
                return False
            if previous is not None and previous.text == "," and not token.starts_row:
                return False  # a magic trailing comma on one row: black explodes it
        elif text == "," and brackets and brackets[-1][1] == "params":
            annotated = False
        elif text == ":" and brackets and brackets[-1][1] == "params":
            annotated = True
        previous = token
    return not brackets


def _word_ok(tokens: list[Token], index: int) -> bool:
    """The few keywords allowed, each only where the renderers put it."""
    text = tokens[index].text
    nxt = tokens[index + 1] if index + 1 < len(tokens) else None
    if text == "async":
        return index == 0 and nxt is not None and nxt.text == "def"
    if text in ("class", "def"):
        return (
            (index == 0 or (index == 1 and tokens[0].text == "async"))
            and nxt is not None
            and nxt.kind == "name"
        )
    if text == "pass":
        return len(tokens) == 1
    if text in ("if", "not"):  # `if [not] NAME:` (`if TYPE_CHECKING:`)
        texts = [t.text for t in tokens]
        shape = len(tokens) == 3 or len(tokens) == 4 and texts[1] == "not"
        return (
            shape
            and texts[0] == "if"
            and tokens[-2].kind == "name"
            and texts[-1] == ":"
            and index < 2
        )
    return index == 0 and (nxt is None or nxt.text not in ("(", "-", "*", "**"))  # return


def _role(previous: Token | None, opener: str, word: str, brackets: list[tuple[str, str]]) -> str:
    after_name = previous is not None and (previous.kind == "name" or previous.text in (")", "]"))
    if opener == "(" and after_name:
        if (
            not brackets
            and word in ("def", "async")
            and previous is not None
            and previous.kind == "name"
        ):
            return "params"
        return "bases" if not brackets and word == "class" else "call"
    if opener == "[":
        return "sub" if after_name else "list"
    if opener == "{":
        return "dict"
    return "tuple"  # a parenthesised expression: black may remove or keep it; not accepted


def _space(
    previous: Token | None,
    token: Token,
    brackets: list[tuple[str, str]],
    word: str,
    annotated: bool,
    index: int,
) -> str | None:
    """The whitespace black puts before `token`, or None where this module does not know."""
    text, kind = token.text, token.kind
    inner = brackets[-1][1] if brackets else ""
    if previous is None:
        return ""
    prev = previous.text
    if kind == "str" and previous.kind in ("str", "str3", "name"):
        return None  # implicit concatenation or a string prefix
    if text in OPENERS:
        if text == "(" and not (
            previous.kind == "name" and prev not in WORDS or prev in (")", "]")
        ):
            return None  # a tuple or parenthesised expression
        if text == "(" and prev in ("class",):
            return None
        if previous.kind == "name" and prev not in WORDS or prev in (")", "]"):
            return "" if text != "{" else None
        if prev in OPENERS or prev == "-":
            return ""
        if prev in (",", ":", "=", "|", "return"):
            return _after(prev, inner, annotated)
        return None
    if text in CLOSERS:
        return ""
    if text == ",":
        return "" if prev not in OPENERS and prev != "," else None
    if text == ":":
        if inner in ("sub", "list", "call", "tuple", "bases"):
            return None  # slices, lambdas, walrus: not known here
        return "" if prev not in OPENERS and prev != "," else None
    if text == ".":
        return "" if (previous.kind == "name" or prev in (")", "]")) else None
    if text == "=":
        if prev in OPENERS or prev in (",", "=", ":", "|", "->"):
            return None
        if inner in ("call", "bases"):
            return ""
        if inner == "params":
            return " " if annotated else ""
        return " " if not brackets else None
    if text in ("|", "->"):
        if prev in OPENERS or prev in (",", "=", ":", "|", "->", "@", "*", "**"):
            return None
        if text == "->" and (brackets or word not in ("def", "async")):
            return None
        return " "
    if text == "@":
        return None  # only a decorator's first token (index 0)
    if text in ("*", "**", "-"):
        # unary only: `*args`, a bare `*`, `**kwargs`, `{**x}`, `-1`
        if text == "-" and prev not in OPENERS and prev not in (",", "=", ":", "|"):
            return None
        if text in ("*", "**") and not (
            prev in ("(", ",", "{") and inner in ("call", "params", "dict")
        ):
            return None
        return "" if prev in OPENERS else _after(prev, inner, annotated)
    # an atom: name, number, string, `...`
    if prev in OPENERS or prev == ".":
        return "" if not (prev == "." and kind != "name") else None
    if prev == "-":
        return "" if kind in ("num", "name") else None
    if prev in ("*", "**"):
        return "" if kind == "name" else None
    if prev == "@":
        return "" if kind == "name" and index == 1 else None
    if prev in (",", ":", "=", "|", "->"):
        return _after(prev, inner, annotated)
    if previous.kind == "name" and prev in WORDS and kind in ATOM_KINDS | {"op"}:
        return " "
    return None


def _after(prev: str, inner: str, annotated: bool) -> str:
    """The space after a separator or operator."""
    if prev == "=":
        if inner in ("call", "bases"):
            return ""
        if inner == "params":
            return " " if annotated else ""
    return " "

