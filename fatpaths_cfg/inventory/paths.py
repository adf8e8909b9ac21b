"""Where a value sits in a YAML document: its path of keys and indices, and how errors print it.

Kept apart from the YAML loader (`yaml_source`), which imports PyYAML: the fabric model names
inventory paths in its errors, and reading a compiled fabric back needs neither.
"""

from __future__ import annotations

# A value's keys and list indices from the document's top: ("switches", 3, "ports").
PathKey = tuple[str | int, ...]


def format_path(path: PathKey) -> str:
    """`switches[3].ports`, as errors name a value."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
