"""Block-style YAML for large, plain documents (containerlab files, generated inventories).

PyYAML's emitter is pure Python and spends tens of seconds on a 100k-node containerlab file.
The documents fatpaths writes are mappings and lists of names, paths and counts, which YAML
writes as plain scalars; for those this module writes the very bytes `yaml.safe_dump(data,
sort_keys=False, width=120)` would, and hands anything else (a string that needs quotes, a
float, an empty collection) to PyYAML's C emitter, which is byte-identical to its Python one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

WIDTH = 120

# A conservative subset of YAML plain scalars: starts with a letter, digit, '.', '/' or '_',
# then characters no YAML indicator cares about; ':' only between two such characters and single
# spaces only between words. Anything else goes to PyYAML.
_PLAIN = re.compile(r"[A-Za-z0-9._/][A-Za-z0-9._/@+=-]*(?:[: ][A-Za-z0-9._/@+=-]+)*\Z")


_resolvers: dict[str, list[tuple[str, re.Pattern[str]]]] = {}


def _reads_back_as_string(value: str) -> bool:
    """What PyYAML's resolver decides for a plain scalar: words that read as numbers,
    booleans, null or timestamps (1e3, yes, 12:30, .inf, 2024-01-01) must be quoted."""
    if not _resolvers:
        # Imported on first use (yaml is not needed to start); a containerlab file of a
        # large fabric asks this 200k times.
        from yaml.resolver import Resolver

        _resolvers.update(Resolver.yaml_implicit_resolvers)
    return not any(pattern.match(value) for _tag, pattern in _resolvers.get(value[0], ()))


class _NeedsPyYAML(Exception):
    """The document holds a value outside the fast subset."""


@lru_cache(maxsize=1 << 16)  # keys and most values repeat on every node of a large lab
def _writes_plain(value: str) -> bool:
    return bool(_PLAIN.match(value)) and _reads_back_as_string(value)


def _scalar(value: object) -> str:
    if isinstance(value, str):
        if _writes_plain(value):
            return value
        raise _NeedsPyYAML
    if isinstance(value, bool):
        # Before int: bool is an int subclass, and YAML spells it in lower case.
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise _NeedsPyYAML


def _line(text: str) -> str:
    # PyYAML folds a plain scalar at a space past the width; short lines are never folded.
    if len(text) > WIDTH:
        raise _NeedsPyYAML
    return text + "\n"


def _mapping(data: dict[Any, Any], indent: str, out: list[str]) -> None:
    if not data:
        raise _NeedsPyYAML
    for key, value in data.items():
        name = _scalar(key)
        if isinstance(value, dict):
            out.append(f"{indent}{name}:\n")
            _mapping(value, indent + "  ", out)
        elif isinstance(value, list):
            out.append(f"{indent}{name}:\n")
            # PyYAML writes a list inside a mapping at the mapping's own indentation.
            _sequence(value, indent, out)
        else:
            out.append(_line(f"{indent}{name}: {_scalar(value)}"))


def _sequence(data: list[Any], indent: str, out: list[str]) -> None:
    if not data:
        raise _NeedsPyYAML
    for item in data:
        if isinstance(item, dict):
            # The first key shares the dash's line; the rest align under it.
            inner: list[str] = []
            _mapping(item, indent + "  ", inner)
            inner[0] = f"{indent}- " + inner[0][len(indent) + 2 :]
            out.extend(inner)
        elif isinstance(item, list):
            raise _NeedsPyYAML
        else:
            out.append(_line(f"{indent}- {_scalar(item)}"))


def dump_block_yaml(data: dict[str, Any]) -> str:
    """`yaml.safe_dump(data, sort_keys=False, width=120)`, quickly where the data allows."""
    out: list[str] = []
    try:
        _mapping(data, "", out)
    except _NeedsPyYAML:
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        return yaml.dump(data, Dumper=dumper, sort_keys=False, width=WIDTH)
    return "".join(out)
