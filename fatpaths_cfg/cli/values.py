"""Command-line values converted without pydantic where the conversion is plain.

typer (0.2x) converts every option value, defaults included, through a pydantic TypeAdapter
built per option on first use: importing pydantic and building some fifty adapters costs a
`fatpaths simulate` run more CPU than its simulation. Most of our options are a str, an int,
a float or a Path given as digits or a file name; for those the result is known without
pydantic. Every other value (and every value typer would reject, so that its message stays
the same) goes to typer's own conversion.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# Values whose int()/float() is what pydantic's lax int and float give; anything else (signs,
# blanks, underscores, exponents, very long numbers) goes to typer.
PLAIN_INT = re.compile(r"-?[0-9]{1,18}")
PLAIN_FLOAT = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,15})?")


class Unhandled:
    """The marker of a value left to typer's conversion."""


UNHANDLED = Unhandled()


class PlainCoercion:
    """Stands in for typer's per-option conversion (`_TyperParameter._runtime_param`): converts
    plain values itself and builds typer's conversion only for the others."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self.typer_coercion: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multiple = param.multiple or param.nargs == -1
        if value is None:
            return () if multiple else None
        plain = plain_value(self.descriptor.annotation, self.descriptor.parameter_info, value)
        if plain is not UNHANDLED:
            return plain
        if self.typer_coercion is None:
            from typer._coercion import build_runtime_param

            self.typer_coercion = build_runtime_param(self.descriptor)
        return self.typer_coercion.coerce(value, param=param, ctx=ctx)


def plain_value(annotation: Any, info: Any, value: Any) -> Any:
    """`value` converted as typer would for an option of type `annotation`, or UNHANDLED."""
    if info.parser is not None or info.clamp:
        return UNHANDLED
    if annotation is str:
        return value if type(value) is str else UNHANDLED
    if annotation is int or annotation is float:
        return _plain_number(annotation, info, value)
    if annotation is Path:
        return _plain_path(info, value)
    if annotation == list[str] and isinstance(value, (list, tuple)):
        return list(value) if all(type(item) is str for item in value) else UNHANDLED
    return UNHANDLED


def _plain_number(number_type: type[Any], info: Any, value: Any) -> Any:
    pattern = PLAIN_INT if number_type is int else PLAIN_FLOAT
    if type(value) is str and pattern.fullmatch(value):
        number = number_type(value)
    elif type(value) is number_type:
        number = value
    else:
        return UNHANDLED
    # Out of range: typer's message names the bound.
    if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
        return UNHANDLED
    return number


def _plain_path(info: Any, value: Any) -> Any:
    """A file name, for options that ask nothing of the file but to be readable if it exists."""
    checks = (info.exists, info.resolve_path, info.allow_dash, info.writable, info.path_type)
    if any(checks) or not (info.file_okay and info.dir_okay):
        return UNHANDLED
    if type(value) is str and value and "\0" not in value:
        path = Path(value)
    elif isinstance(value, Path):
        path = value
    else:
        return UNHANDLED
    if info.readable and os.path.exists(path) and not os.access(path, os.R_OK):
        return UNHANDLED
    return path


def convert_plainly(params: list[Any]) -> None:
    """Give each typer option a PlainCoercion (typer versions without per-option pydantic
    conversion have no `_runtime_param`, and are left alone)."""
    for param in params:
        if getattr(param, "_runtime_param", UNHANDLED) is None and hasattr(
            param, "type_descriptor"
        ):
            param._runtime_param = PlainCoercion(param.type_descriptor)
