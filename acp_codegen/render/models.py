"""Model rendering: the model definitions through datamodel-code-generator's Python API.

The IR has already decided every class name, field, annotation and the order of definitions.
This module hands the definitions to datamodel-code-generator (DMCG) as a normalised JSON
Schema: one `$defs` entry per IR struct (an object) and per union or alias (a string), each with
its template data (`extra_template_data`): its name, bases, docstring, tags, leniency rules and
every field's rendered line and docstring. DMCG renders each with the custom templates in
`templates/dmcg/`: struct classes (`BaseModel.jinja2`) and type aliases (`_acp_alias.jinja2`).
The entries name nothing, so DMCG parses no field types and resolves no references: the order
of the definitions, and so every import-time dependency, is the IR's (`acp_codegen.ir.order`), not
DMCG's. The document root is a string too (DMCG needs one; a root naming every definition cost
it a third of its time): it renders an `__all__`, which `acp_codegen.render.model_modules` drops
with DMCG's imports (it checks that the body defines every definition). What DMCG cannot
express (callable discriminators, open enums, leniency, `oneOf` exclusivity) is spelled by the
IR filters in `acp_codegen.render.pytypes` before DMCG sees it; nothing edits DMCG's output text.
`acp_codegen.render.model_modules` places each definition's text in the module of its group.
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

from acp_codegen.cache import cache_key, load_text, store_text
from acp_codegen.errors import CodegenError, Diagnostic
from acp_codegen.ir.nodes import Alias, Enum, Protocol, Struct, TaggedUnion
from acp_codegen.render import pytypes

DMCG_TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "dmcg"
ROOT_NAME = "AcpModelsModule"  # DMCG's name for the document root; never emitted
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
    "class_name": ROOT_NAME,  # the document root's model: renders `__all__`, dropped when cut
    "use_type_alias": True,  # unions and aliases are type aliases, not RootModel classes
    "disable_future_imports": True,  # the head (our template) has it, before our imports
    "disable_timestamp": True,
    "formatters": [],  # black runs in our format stage
}


# What DMCG reads of a definition: only its kind (a class, or a type alias); the rest is template data.
_STRUCT_SCHEMA: dict[str, Any] = {"type": "object"}
_ALIAS_SCHEMA: dict[str, Any] = {"type": "string"}


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
        "fields": [
            {"line": pytypes.field_line(f, protocol), "doc": pytypes.docstring(f.description) if f.description else ""}
            for f in struct.fields
        ],
    }


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
            defs[d.name], data[f"#/$defs/{d.name}"] = dict(_STRUCT_SCHEMA), _struct_data(d, protocol)
        else:
            defs[d.name], data[f"#/$defs/{d.name}"] = dict(_ALIAS_SCHEMA), _alias_data(d, protocol)
    schema: dict[str, Any] = {**_ALIAS_SCHEMA, "$defs": defs}
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
    if not isinstance(text, str):
        raise _failure(protocol, f"datamodel-code-generator returned {type(text).__name__}, not one module")
    return text if text.endswith("\n") else text + "\n"


def _failure(protocol: Protocol, message: str) -> CodegenError:
    return CodegenError(Diagnostic("error", "model-render", message, protocol.source, None))
