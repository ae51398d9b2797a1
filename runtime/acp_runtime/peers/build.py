"""What the generated peers' builders share: `build`, which makes a params model or union variant
from a builder's arguments (or takes the model as it is), and `extension_method`, which checks an
extension method's name. Depends on the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

M = TypeVar("M")


def build(
    cls: type[M],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    positional: tuple[str, ...],
    convert: Mapping[str, Callable[[Any], Any]],
) -> M:
    """`cls` built (strictly) from a builder's arguments; a lone `cls` instance is taken as it is.

    `positional` names the required parameters in order; an optional one passed as `None` is
    omitted. `convert` maps parameters to their conversion (a `str` to a text block, say).
    """
    if len(args) == 1 and not kwargs and isinstance(args[0], cls):
        return args[0]
    if len(args) > len(positional):
        raise TypeError(f"{cls.__name__}: at most {len(positional)} positional arguments")
    # fewer arguments than parameters is fine: the rest come as keywords or are optional
    fields: dict[str, Any] = dict(zip(positional, args, strict=False))
    known: Mapping[str, Any] = getattr(cls, "model_fields", kwargs)
    for name, value in kwargs.items():
        if name not in known:
            raise TypeError(f"{cls.__name__}: unexpected keyword argument {name!r}")
        if name in fields:
            raise TypeError(f"{cls.__name__}: {name!r} given twice")
        if value is not None or name in positional:
            fields[name] = value
    for name, function in convert.items():
        value = fields.get(name)
        if value is not None:
            fields[name] = function(value)
    return cls(**fields)


def extension_method(method: str) -> str:
    """The name of an extension method, checked: it must start with `_` (the rest is ACP's)."""
    if not method.startswith("_"):
        raise ValueError(f"extension method names start with '_' (got {method!r})")
    return method
