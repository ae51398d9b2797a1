"""`evaluate_annotations`: a generated class's string annotations evaluated once, as the class is
created, so pydantic does not parse them again. Standard library only.

The generated modules start with `from __future__ import annotations`, so each field's annotation
is a string, and pydantic evaluates every one through `typing.ForwardRef`, which compiles it:
about 1,500 compilations of some 300 distinct strings when the draft's module is imported, a
tenth of its import time. Evaluated here (each distinct string compiled once per process, in the
module's namespace, as pydantic would), an annotation reaches pydantic as the object it stands
for. One that names a class not defined yet (a forward or recursive reference) becomes the
`typing.ForwardRef` pydantic would make of the string, and pydantic resolves it when the class
is built, as before.

A text without a call (`StrictStr | None`, `Sequence[ContentBlock]`) stands for typing objects
that nothing changes, so within one execution of the module (`models.generated.shared_values`;
a reload starts afresh) its value, or while it cannot be evaluated its
`ForwardRef`, is shared, as typing shares its own. A text with a call (`Field(...)`) is
evaluated, or made a `ForwardRef`, for each field: pydantic copies a `FieldInfo` it finds in an
annotation shallowly, so a shared one could carry one field's settings to another.

Only the classes of a generated package's model modules (`models.generated`) and of
`models.base` are touched: a user's subclass keeps pydantic's own
resolution (which also sees the locals of the function that defines it).
"""

from __future__ import annotations

import sys
from types import CodeType
from typing import Any, ForwardRef

from .generated import chain_bound, shared_values

# The runtime's base classes (`TaggedModel.__acp_tags__`, a string pydantic would evaluate again for
# each of its subclasses).
_BASE = f"{__package__}.base"
_CODE: dict[str, CodeType] = {}


def evaluate_annotations(cls: type) -> None:
    """Replace the string annotations of `cls` (a class of a generated model group or of
    `models.base`) by their values."""
    module = sys.modules.get(cls.__module__)
    if module is None:
        return
    if cls.__module__ != _BASE and chain_bound(cls.__module__) is None:
        return
    namespace = vars(module)
    # the class's own dict, changed in place (`inspect.get_annotations` answers a copy)
    annotations: dict[str, Any] | None = vars(cls).get("__annotations__")
    if not annotations:
        return
    # text -> value, and ("ref", text) -> its ForwardRef, for texts without a call
    shared = shared_values(module)
    for name, text in annotations.items():
        if type(text) is not str:
            continue
        plain = "(" not in text
        if plain and text in shared:
            annotations[name] = shared[text]
            continue
        code = _CODE.get(text)
        if code is None:
            code = _CODE[text] = compile(text, "<annotation>", "eval")
        try:
            value = annotations[name] = eval(code, namespace)  # the generated module's own text
        except NameError:  # not defined yet: pydantic resolves it at build time
            ref = shared.get(("ref", text)) if plain else None
            if ref is None:  # as pydantic converts a string annotation (`_type_convert`)
                ref = ForwardRef(text, is_argument=False, is_class=True)
                if plain:
                    shared["ref", text] = ref
            annotations[name] = ref
        else:
            if plain:  # generated names are never rebound (see the IR's naming)
                shared[text] = value
