"""YAML loading that remembers where every value came from.

PyYAML's composed node tree carries line numbers; we build plain Python values from it and
keep the positions in a side table keyed by path, so user data is never polluted with markers.
Aliases are expanded while building, which is where alias bombs explode, so expansion is
bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fatpaths_cfg.errors import UserError, UserErrors

PathKey = tuple[str | int, ...]

# Large generated inventories (Slim Fly q=37 wiring) have a few hundred thousand nodes; alias
# bombs reach billions. The bound sits far above the former and far below the latter.
MAX_EXPANDED_NODES = 2_000_000


@dataclass
class SourceMap:
    """Line numbers (1-based) of every value and key in a loaded document."""

    file: str
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: PathKey) -> int:
        """The line of `path`, or of its nearest ancestor that has one."""
        probe = tuple(path)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), 1)


def format_path(path: PathKey) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class _Builder:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.expanded = 0
        self.errors: list[UserError] = []
        self._scalars = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        self.expanded += 1
        if self.expanded > MAX_EXPANDED_NODES:
            raise UserErrors(
                [
                    UserError(
                        self.source.file,
                        node.start_mark.line + 1,
                        format_path(path),
                        f"document expands to more than {MAX_EXPANDED_NODES:,} values",
                        "aliases (&anchor / *alias) nested this deep look like an alias bomb",
                    )
                ]
            )
        self.source.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node)

    def _scalar(self, node: yaml.Node) -> Any:
        # SafeLoader resolved the tag during composition; its constructor gives exactly YAML's
        # safe typing (int, float, bool, null, str).
        return self._scalars.construct_object(node, deep=True)

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.errors.append(
                    UserError(
                        self.source.file,
                        key_node.start_mark.line + 1,
                        format_path(path),
                        "merge keys (<<) are not supported",
                        "write the keys out",
                    )
                )
                continue
            key = str(self._scalar(key_node))
            child = (*path, key)
            if key in result:
                self.errors.append(
                    UserError(
                        self.source.file,
                        key_node.start_mark.line + 1,
                        format_path(child),
                        "duplicate key",
                        "each key may appear once per mapping",
                    )
                )
                continue
            self.source.lines.setdefault(child, key_node.start_mark.line + 1)
            result[key] = self.build(value_node, child)
        return result


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Parse `path`; raise UserErrors naming the line of any syntax error."""
    name = str(path)
    source = SourceMap(name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserErrors.single(name, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserErrors.single(name, "", f"cannot read file: {exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or "invalid YAML"
        raise UserErrors.single(
            name, "", f"YAML syntax error: {problem}", "check indentation and quoting", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise UserErrors.single(name, "", f"YAML syntax error: {exc}") from None
    if node is None:
        raise UserErrors.single(name, "", "the file is empty", "an inventory mapping", line=1)
    builder = _Builder(source)
    value = builder.build(node, ())
    if builder.errors:
        raise UserErrors(builder.errors)
    return value, source
