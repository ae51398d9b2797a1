"""Model rendering: the model definitions through datamodel-code-generator's Python API.

The IR has already decided every class name, field name and annotation. This module hands that
to datamodel-code-generator (DMCG) as a normalised JSON Schema: one `$defs` entry per IR struct,
union and alias; each property carries its rendered field line and docstring as `x-acp-*` keys
(DMCG's `field_extra_keys`), each class its bases, tags and leniency rules as template data
(`extra_template_data`). DMCG assembles one module body with the custom templates in
`templates/dmcg/`: struct classes (`BaseModel.jinja2`) and type aliases (`_acp_alias.jinja2`),
in its `keep_model_order` (name order, a definition moved only after its base class or the
members an alias is evaluated from, which the normalised schema tells it as `$ref`s). The
document root renders a footer (`__all__`), which DMCG places last since the root refers to every
definition. What DMCG cannot express (callable discriminators, open enums, leniency, `oneOf`
exclusivity) is spelled by the IR filters in `codegen.render.pytypes` before DMCG sees it; nothing
edits DMCG's output text. `codegen.render.model_modules` places each definition's text in the
module of its group.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import warnings
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import datamodel_code_generator as dmcg
from datamodel_code_generator.enums import DataModelType, InputFileType

from codegen.cache import cache_key, load_text, store_text
from codegen.errors import CodegenError, Diagnostic
from codegen.ir.nodes import Alias, Enum, Protocol, Struct, TaggedUnion
from codegen.ir.order import type_refs
from codegen.render import pytypes

DMCG_TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates" / "dmcg"
ROOT_NAME = "AcpModelsModule"  # DMCG's name for the document root; never emitted
FOOTER = "\n__all__ = ["  # the document root's text: the module's last statement
_FIELD_KEYS = {"x-acp-field", "x-acp-doc"}
# What else the text depends on: DMCG, the Jinja it renders with, and this module's own code.
_RENDERER = ";".join(
    [
        f"datamodel-code-generator={importlib.metadata.version('datamodel-code-generator')}",
        f"jinja2={importlib.metadata.version('jinja2')}",
        hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
    ]
)
# How DMCG is driven (besides its input, template data, templates and file header).
DMCG_OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "field_extra_keys": _FIELD_KEYS,
    "class_name": ROOT_NAME,  # the document root's model: renders the footer
    "keep_model_order": True,  # name order, moved only for what a definition is evaluated from
    "use_type_alias": True,  # unions and aliases are type aliases, not RootModel classes
    "disable_future_imports": True,  # the head (our template) has it, before our imports
    "disable_timestamp": True,
    "formatters": [],  # black runs in our format stage
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _struct_schema(struct: Struct, protocol: Protocol) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for field in struct.fields:
        # "null": DMCG's own type for the placeholder is unused, and None needs no import
        prop: dict[str, Any] = {"type": "null", "x-acp-field": pytypes.field_line(field, protocol)}
        if field.description:
            prop["x-acp-doc"] = pytypes.docstring(field.description)
        properties[field.wire_name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if struct.base:  # tells DMCG the base must come first; the class statement comes from the IR
        schema["allOf"] = [_ref(struct.base)]
    return schema


def _struct_data(struct: Struct, protocol: Protocol) -> dict[str, Any]:
    bases = pytypes.struct_bases(struct, protocol)
    tags = pytypes.tag_names(struct)
    lenient = pytypes.lenient_rules(struct, protocol) if pytypes.own_lenient(struct) else {}
    return {
        "name": struct.name,
        "bases": bases,
        "first_base": bases.split(", ")[0],
        "doc": pytypes.docstring(struct.description, indent=4),
        "forbid": struct.extra == "forbid",
        "tags": pytypes.tags_statement(struct, protocol) if tags else "",
        "lenient": pytypes.rules_literal(lenient) if lenient else "",
    }


def _alias_schema(definition: TaggedUnion | Alias) -> dict[str, Any]:
    # The refs only tell DMCG what the alias is evaluated from (its import-time dependencies),
    # so that it keeps them first; the annotation itself comes from the IR.
    if isinstance(definition, TaggedUnion):
        deps = [v.target for v in definition.variants] + ([definition.unknown] if definition.unknown else [])
    else:
        deps = list(dict.fromkeys(type_refs(definition.type)))
    return {"anyOf": [_ref(d) for d in deps]} if deps else {"type": "string"}


def _alias_data(definition: TaggedUnion | Alias, protocol: Protocol) -> dict[str, Any]:
    if isinstance(definition, TaggedUnion):
        annotation = pytypes.union_annotation(definition, protocol)
    else:
        annotation = pytypes.alias_annotation(definition)
    return {"name": definition.name, "annotation": annotation, "doc": pytypes.docstring(definition.description), "footer": False}


def dmcg_input(protocol: Protocol) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The normalised schema DMCG reads and the per-class template data, both from the IR."""
    defs: dict[str, Any] = {}
    data: dict[str, dict[str, Any]] = {}
    for d in _model_definitions(protocol):
        if isinstance(d, Struct):
            defs[d.name], data[f"#/$defs/{d.name}"] = _struct_schema(d, protocol), _struct_data(d, protocol)
        else:
            defs[d.name], data[f"#/$defs/{d.name}"] = _alias_schema(d), _alias_data(d, protocol)
    schema: dict[str, Any] = {"anyOf": [_ref(name) for name in defs], "$defs": defs}
    data["#"] = {"footer": True, "exports": list(defs)}
    return schema, data


def _model_definitions(protocol: Protocol) -> list[Struct | TaggedUnion | Alias]:
    return [d for d in protocol.definitions if not isinstance(d, Enum)]


def render_models(protocol: Protocol, head: str, cache_dir: Path | None = None) -> str:
    """DMCG's module body, after `head` (a comment: the body is cut into the group modules).

    With a `cache_dir`, the text is cached under the sha256 of everything it depends on: DMCG's
    version, its input, our templates and the head.
    """
    schema, data = dmcg_input(protocol)
    options = json.dumps({k: sorted(v) if isinstance(v, set) else str(v) for k, v in DMCG_OPTIONS.items()})
    key = cache_key(_RENDERER, options, json.dumps([schema, data, head]), *_template_texts())
    cached = load_text(cache_dir, key)
    if cached is not None:
        return cached
    text = _run_dmcg(protocol, schema, data, head)
    store_text(cache_dir, key, text)
    return text


@cache  # read once per process
def _template_texts() -> tuple[str, ...]:
    return tuple(f"{p.relative_to(DMCG_TEMPLATES)}\n{p.read_text(encoding='utf-8')}" for p in sorted(DMCG_TEMPLATES.rglob("*.jinja2")))


def _run_dmcg(protocol: Protocol, schema: dict[str, Any], data: dict[str, dict[str, Any]], head: str) -> str:
    template_data: defaultdict[str, dict[str, Any]] = defaultdict(dict)
    template_data.update({path: {"acp": value} for path, value in data.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DMCG's notices about optional extras are not ours to show
        try:
            text = dmcg.generate(
                schema,
                extra_template_data=template_data,
                custom_file_header=head.rstrip("\n"),
                custom_template_dir=DMCG_TEMPLATES,
                **DMCG_OPTIONS,
            )
        except dmcg.Error as exc:
            raise _failure(protocol, f"datamodel-code-generator failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - DMCG raises many kinds; the CLI must print one line
            raise _failure(protocol, f"datamodel-code-generator failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(text, str) or not _footer_last(text):
        raise _failure(protocol, "datamodel-code-generator did not place the module footer last")
    return text if text.endswith("\n") else text + "\n"


def _footer_last(text: str) -> bool:
    """The module ends with the footer: nothing after the `__all__` list."""
    start = text.rfind(FOOTER)
    return start >= 0 and text.rstrip().endswith("]") and "\n]" not in text[start:].rstrip()[:-1]


def _failure(protocol: Protocol, message: str) -> CodegenError:
    return CodegenError(Diagnostic("error", "model-render", message, protocol.source, None))
