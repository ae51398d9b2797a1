"""Python spellings of IR nodes: annotations, defaults, docstrings, class bases.

These are the Jinja filters the model templates use; they read IR nodes only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from acp_codegen.fmt import LINE_LENGTH
from acp_codegen.ir.nodes import (
    Alias,
    ArrayOf,
    Const,
    Field,
    MapOf,
    Protocol,
    Ref,
    Scalar,
    Struct,
    TaggedUnion,
    TypeExpr,
    UnionOf,
)
from acp_codegen.ir.patterns import Regex

_FIELD_ARGS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "multipleOf": "multiple_of",
    "minItems": "min_length",
    "maxItems": "max_length",
}
FIELD_INDENT = 4  # the column struct fields start at
_SCALAR = {"str": "StrictStr", "int": "StrictInt", "bool": "StrictBool", "any": "Any", "none": "None", "object": "dict[str, Any]"}


def _constrained(base: str, constraints: tuple[tuple[str, Any], ...], regex: Regex | None = None) -> str:
    args = [f"{_FIELD_ARGS[k]}={_constraint_value(k, v, regex)}" for k, v in constraints if k in _FIELD_ARGS]
    return f"Annotated[{base}, Field({', '.join(args)})]" if args else base


def _integer(constraints: tuple[tuple[str, Any], ...]) -> str:
    """JSON Schema's `integer` (`2.0` is one; the runtime's `_jsonint`), its bounds in its marker."""
    args = [f"{_FIELD_ARGS[k]}={python_literal(v)}" for k, v in constraints if k in _FIELD_ARGS]
    return f"Annotated[int, Integer({', '.join(args)})]" if args else "JsonInt"


def _constraint_value(key: str, value: Any, regex: Regex | None) -> str:
    """A constraint's value as source; a pattern as its engine needs it (a compiled `re.Pattern`
    makes pydantic use Python's `re`)."""
    if key != "pattern" or regex is None:
        return python_literal(value)
    literal = python_literal(regex.text)
    return f"_re.compile({literal})" if regex.engine == "python-re" else literal


def annotation(expr: TypeExpr) -> str:
    """The Python annotation for a type expression."""
    if isinstance(expr, Scalar):
        if expr.kind == "int":
            return _integer(expr.constraints)
        if expr.kind == "number":
            return f"{_constrained('StrictInt', expr.constraints)} | {_constrained('StrictFloat', expr.constraints)}"
        return _constrained(_SCALAR[expr.kind], expr.constraints, expr.regex)
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, ArrayOf):
        # `Items`: `Sequence` for type checkers (any sequence of subtypes), `list` at run time
        return _constrained(f"Items[{annotation(expr.item)}]", tuple(c for c in expr.constraints if c[0] != "uniqueItems"))
    if isinstance(expr, MapOf):
        return f"dict[str, {annotation(expr.value)}]"
    if isinstance(expr, Const):
        return "None" if expr.value is None else f"Literal[{python_literal(expr.value)}]"
    members, markers, nullable = _union_parts(expr)
    text = f"Annotated[{members}, {', '.join(markers)}]" if markers else members
    return text + " | None" if nullable and text != "None" else text


def _union_parts(expr: UnionOf) -> tuple[str, list[str], bool]:
    """(the options joined by `|`, the annotation markers, whether `None` is an option)."""
    texts = [annotation(option) for option in expr.options]
    parts = [text for text in dict.fromkeys(texts) if text != "None"]
    markers: list[str] = []
    if len(parts) > 1 and any(isinstance(o, Ref) for o in expr.options):
        # a fitting option beats a repaired one; with `oneOf`, no other option may fit as well
        markers = ["STRICT_FIRST", "ONE_OF"] if expr.exclusive else ["STRICT_FIRST"]
    return " | ".join(parts) or "None", markers, "None" in texts


def alias_annotation(alias: Alias) -> str:
    """The value of a module-level `Name: TypeAlias = ...` (one item a line when too long)."""
    text = annotation(alias.type)
    if alias.apart:
        return f"Apart[{text}]"
    if isinstance(alias.type, UnionOf) and len(f"{alias.name}: TypeAlias = {text}") > LINE_LENGTH:
        members, markers, nullable = _union_parts(alias.type)
        if markers and not nullable:
            return exploded("Annotated[", [members, *markers], "]", 0)
    return text


def python_literal(value: Any) -> str:
    """A JSON value as Python source."""
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(json.loads(json.dumps(value)))


def _string(text: str) -> str:
    """A string literal in black's preferred quotes (double, unless that needs more escapes), so
    that black has nothing to change in it."""
    literal = repr(text)  # single-quoted unless `text` has a ' and no "
    return f'"{literal[1:-1]}"' if '"' not in text and "'" not in text else literal


def field_line(field: Field, protocol: Protocol) -> str:
    """`name: Annotation = default` for one struct field."""
    ann = annotation(field.type)
    field_args: list[str] = []
    metadata: list[str] = []
    if field.py_name != field.wire_name:
        field_args.append(f"alias={python_literal(field.wire_name)}")
    default: str | None = None
    if field.tag:
        enum_ref = isinstance(field.type, Ref)
        if field.default_json is not None:
            const = json.loads(field.default_json)
            default = f"{ann}.{_const_name(protocol, ann, const)}" if enum_ref else python_literal(const)
            if enum_ref:  # typed by the open tag enum, but only this variant's value is valid
                metadata.append(f"TagValue({python_literal(const)})")
        elif enum_ref:  # an unknown variant: any tag its union does not name
            metadata.append("NOT_KNOWN_TAG")
    elif not field.required:
        if field.default_json is not None:
            value = json.loads(field.default_json)
            default = python_literal(value)
            if value is None and not field.nullable:
                ann = f"{ann} | None"
            elif value is not None and _has_ref(field.type):  # the model or enum, not raw JSON
                # typed Any: pydantic before 2.12 types `Field(default=x)` as x's type, not the field's
                default = f"Field(default=_typing.cast(_typing.Any, {default}), validate_default=True)"
        elif field.nullable:
            default = "None"
        else:
            ann = f"Annotated[{ann} | None, NOT_NULL]"
            default = "None"
    if field_args:
        metadata.append(f"Field({', '.join(field_args)})")
    tail = f" = {default}" if default is not None else ""
    if not metadata:
        return f"{field.py_name}: {ann}{tail}"
    line = f"{field.py_name}: Annotated[{', '.join([ann, *metadata])}]{tail}"
    if FIELD_INDENT + len(line) <= LINE_LENGTH:
        return line
    return f"{field.py_name}: {exploded('Annotated[', [ann, *metadata], ']', FIELD_INDENT)}{tail}"


def exploded(opening: str, items: list[str], closing: str, indent: int) -> str:
    """`opening` + one item a line (each with a trailing comma) + `closing`, for a statement at
    column `indent`: the layout black keeps as it is (the trailing comma tells it to), used for
    what would not fit on one line, so that black has nothing left to change."""
    inner = " " * (indent + 4)
    return opening + "\n" + "".join(f"{inner}{item},\n" for item in items) + " " * indent + closing


def _has_ref(expr: TypeExpr) -> bool:
    if isinstance(expr, Ref):
        return True
    if isinstance(expr, ArrayOf):
        return _has_ref(expr.item)
    if isinstance(expr, MapOf):
        return _has_ref(expr.value)
    if isinstance(expr, UnionOf):
        return any(_has_ref(o) for o in expr.options)
    return False


def _const_name(protocol: Protocol, enum_name: str, value: str) -> str:
    enum = protocol.get(enum_name)
    for v in getattr(enum, "values", ()):
        if v.value == value:
            return str(v.const_name)
    raise KeyError(f"{enum_name} has no value {value!r}")


def docstring(text: str | None, indent: int | None = None) -> str:
    """A triple-quoted docstring literal (escaped) for a description.

    With `indent` (the columns of the statement it opens a class or function body at), it is laid
    out as black lays out such docstrings (continuation lines re-indented, closing quotes on a
    line of their own when they would not fit), so black's first pass leaves it unchanged.
    """
    body = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = _UNWRITABLE.sub(_escaped_char, body)
    if indent is not None and "\n" in body and not re.search(r"\\\s*\n", body):  # black skips those
        body = _reindented(body, " " * indent)
    if body.startswith('"'):
        body = " " + body
    if body.endswith('"'):
        body += " "
    lines = body.splitlines()
    if indent is not None and len(lines) > 1 and len(lines[-1]) + 3 > LINE_LENGTH:
        return f'"""{body}\n{" " * indent}"""'
    return f'"""{body}"""'


# Characters a docstring cannot hold as they are: NUL (a SyntaxError), other C0 controls, DEL, and
# what `str.splitlines` (black, `_reindented`) takes for a line break besides `\n` (a literal
# `\r` would also be read back as `\n`). Escaped, the docstring's value is the description.
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


def _escaped_char(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _reindented(body: str, prefix: str) -> str:
    """black's `fix_multiline_docstring`: continuation lines lose their common indentation and
    get `prefix`; blank lines become empty; trailing spaces go."""
    lines = [_leading_tabs_expanded(line) for line in body.splitlines()]
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    rest = [(prefix + line[margin:].rstrip()) if line.strip() else "" for line in lines[1:]]
    return "\n".join([lines[0].strip(), *rest])


def _leading_tabs_expanded(line: str) -> str:
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)].expandtabs() + stripped if stripped else line


def struct_bases(struct: Struct, protocol: Protocol) -> str:
    """The base classes of a struct's class statement."""
    tagged = struct.role in ("variant", "unknown")
    if struct.base is None:
        return "TaggedModel" if tagged else "AcpModel"
    base = protocol.get(struct.base)
    base_tagged = isinstance(base, Struct) and base.role in ("variant", "unknown")
    return f"{struct.base}, TaggedModel" if tagged and not base_tagged else struct.base


def all_fields(struct: Struct, protocol: Protocol) -> list[Field]:
    """Own and inherited fields, base first (a field a subclass redefines in its place there)."""
    chain: list[Struct] = []
    names: set[str] = set()
    current: object = struct
    while isinstance(current, Struct) and current.name not in names:  # iterative: bases of any depth
        chain.append(current)
        names.add(current.name)
        current = protocol.get(current.base) if current.base else None
    fields: list[Field] = []
    for cls in reversed(chain):
        own = {f.wire_name for f in cls.fields}
        fields = [f for f in fields if f.wire_name not in own] + list(cls.fields)
    return fields


def lenient_rules(struct: Struct, protocol: Protocol) -> dict[str, list[str]]:
    """Wire name -> leniency rules, including inherited fields."""
    return {f.wire_name: list(f.lenience) for f in all_fields(struct, protocol) if f.lenience}


def rules_literal(rules: dict[str, list[str]]) -> str:
    """Python source of a `__acp_lenient__` mapping (wire name -> frozenset of rules)."""
    items = [f"{python_literal(k)}: frozenset({python_literal(sorted(v))})" for k, v in rules.items()]
    return exploded("{", items, "}", FIELD_INDENT)


def own_lenient(struct: Struct) -> bool:
    """Whether this struct declares lenient fields itself (so it needs its own validator)."""
    return any(f.lenience for f in struct.fields)


def tag_names(struct: Struct) -> list[str]:
    """Python names of the tag fields this struct fixes with a default."""
    return [f.py_name for f in struct.fields if f.tag and f.default_json is not None]


def tags_statement(struct: Struct, protocol: Protocol) -> str:
    """The `__acp_tags__` class attribute: this struct's fixed tags plus its tagged base's."""
    target = "__acp_tags__: ClassVar[frozenset[str]] = "
    tags = python_literal(sorted(tag_names(struct)))
    base = protocol.get(struct.base) if struct.base else None
    if not (isinstance(base, Struct) and base.role in ("variant", "unknown")):
        return f"{target}frozenset({tags})"
    line = f"{target}{base.name}.__acp_tags__ | frozenset({tags})"
    if FIELD_INDENT + len(line) <= LINE_LENGTH:
        return line
    # black's right-hand split: the last bracket's content on a line of its own
    return f"{target}{base.name}.__acp_tags__ | frozenset(\n{' ' * (FIELD_INDENT + 4)}{tags}\n{' ' * FIELD_INDENT})"


def loose_none(union: TaggedUnion, protocol: Protocol) -> bool:
    """Whether the union's no-tag variant does not constrain the tag at all (the schema option
    has no tag property), so that any value it accepts is valid whatever its tag says."""
    none = union.none_variant
    target = protocol.get(none.target) if none else None
    return isinstance(target, Struct) and all(f.wire_name != union.tag_wire for f in all_fields(target, protocol))


def union_annotation(union: TaggedUnion, protocol: Protocol) -> str:
    """The annotation a tagged union's type alias stands for.

    Variants are chosen by the tag (`tag_discriminator`). A no-tag variant that leaves the tag
    unconstrained is an alternative of its own instead: it is tried, left to right, when the
    tagged variants do not fit (absent, unknown or malformed tag, or a known tag whose variant
    rejects the payload), as the schema's `anyOf` accepts such values through that option.
    """
    loose = loose_none(union, protocol)
    none = union.none_variant
    choices = [(v.target, python_literal(v.tag)) for v in union.variants if v.tag is not None]
    if none is not None and not loose:
        choices.append((none.target, "NONE_TAG"))
    if union.unknown:
        choices.append((union.unknown, "UNKNOWN_TAG"))
    options = [f"Annotated[{cls}, Tag({tag})]" for cls, tag in choices]
    members = " | ".join(options)
    if 4 + len(members) + 1 > LINE_LENGTH:  # black's layout: one option a line, `|` first
        members = "\n    | ".join(options)
    known = exploded("[", [python_literal(t) for t in union.known_tags], "]", 16) if union.known_tags else "[]"
    arguments = [
        python_literal(union.tag_wire),
        python_literal(union.tag_py),
        f"frozenset(\n                {known}\n            )" if union.known_tags else "frozenset([])",
        f"has_none={none is not None and not loose}",
        f"has_unknown={union.unknown is not None}",
        f"lenient={union.lenient_tag}",
    ]
    discriminator = f"Discriminator(\n        {exploded('tag_discriminator(', arguments, ')', 8)}\n    )"
    tagged = exploded("Annotated[", [members, discriminator], "]", 0)
    if not loose or none is None:
        return tagged
    return f'Annotated[{tagged} | {none.target}, Field(union_mode="left_to_right"), STRICT_FIRST]'
