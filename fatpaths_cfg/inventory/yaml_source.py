"""YAML loading that remembers where every value came from.

PyYAML's composed node tree carries line numbers; we build plain Python values from it and
keep the positions in a side table keyed by path, so user data is never polluted with markers.

Hostile files are refused with a located error before they can exhaust time, memory or the
stack: the size is capped before reading, nesting depth is capped while composing (PyYAML's
composer recurses once per level), and values produced by aliases are counted apart from the
values actually written, because only aliases can make a small file expand into billions.
Values are YAML's safe, plain types only: a tag naming anything else (`!ip`, `!!python/none`)
and a number that is not finite (`.inf`, `.nan`) are located errors, for inventories, sweep
files and devices files alike, since all of them load here.

libyaml scans and parses where PyYAML was built with it (ten times faster on a 10k-host
inventory); composing stays in Python so the depth cap and alias tracking hold either way, and
a file libyaml refuses is parsed again in Python for PyYAML's familiar error message. Plain
documents skip the node tree altogether (`yaml_events`).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from math import ceil
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader, ReaderError
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from fatpaths_cfg.errors import UserError, UserErrors
from fatpaths_cfg.inventory.paths import PathKey, format_path
from fatpaths_cfg.inventory.yaml_events import build_from_events, build_from_plain_text

# The largest generated wiring (Slim Fly q=37) is 8.2 MB and already takes tens of seconds to
# parse; twice that leaves room for hand-written comments while refusing, in milliseconds, files
# that would parse for minutes.
SIZE_CAP_VARIABLE = "FATPATHS_MAX_INVENTORY_MB"
DEFAULT_SIZE_CAP_MB = 16
BYTES_PER_MB = 1_000_000

# Inventories nest five or six levels deep; Python's recursion limit sits near a few hundred
# levels of PyYAML's composer. 64 is far from both.
MAX_NESTING = 64

# Anchors in real inventories share small blocks (a port list, a defaults mapping); alias bombs
# expand to billions of values. Values written out in the file do not count: the size cap
# bounds those.
MAX_ALIAS_VALUES = 1_000_000

# YAML's own tags, written `!!name`; any other tag (`!ip`, `!!python/...`) names a type fatpaths
# does not construct. The safe constructor knows which scalar tags it builds; of those, bytes
# and the ordered or set collections fit no field and no JSON output.
_YAML_TAG_PREFIX = "tag:yaml.org,2002:"
_MAPPING_TAG = _YAML_TAG_PREFIX + "map"
_SEQUENCE_TAG = _YAML_TAG_PREFIX + "seq"
_SCALAR_TAGS = frozenset(
    tag
    for tag in SafeConstructor.yaml_constructors
    if tag is not None and tag not in (_MAPPING_TAG, _SEQUENCE_TAG)
) - {_YAML_TAG_PREFIX + name for name in ("binary", "omap", "pairs", "set")}
_PLAIN_VALUES = "remove the tag: values are plain strings, numbers, booleans, null, lists, mappings"


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


def _too_deep(file: str, line: int, top_key: PathKey, hint: str) -> UserErrors:
    return UserErrors.single(
        file, format_path(top_key), f"nested more than {MAX_NESTING} levels deep", hint, line=line
    )


class _BoundedComposer(Composer):
    """Refuses deep nesting and remembers which nodes aliases point at.

    Composition stays in Python (PyYAML's composer) over whichever parser feeds it events, so
    the depth cap holds even with libyaml underneath, whose own composer recurses in C.
    """

    file: str
    # Supplied by the parser each loader below mixes in (Python's or libyaml's).
    check_event: Any
    peek_event: Any

    def _bound(self, file: str) -> None:
        self.file = file
        self.depth = 0
        self.top_key: PathKey = ()
        self.aliased: set[int] = set()

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor
            if anchor in self.anchors:
                self.aliased.add(id(self.anchors[anchor]))
            return super().compose_node(parent, index)
        if self.depth == 1 and index is not None:
            # The root's children: `index` is the key node in a mapping, the position in a list.
            self.top_key = (index,) if isinstance(index, int) else (str(index.value),)
        if self.depth >= MAX_NESTING:
            line = self.peek_event().start_mark.line + 1
            hint = "an inventory nests about five levels; look for unclosed brackets"
            raise _too_deep(self.file, line, self.top_key, hint)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _BoundedLoader(_BoundedComposer, Reader, Scanner, Parser, SafeConstructor, Resolver):
    """Pure Python: slow, but its error messages are the ones the golden error tests hold."""

    def __init__(self, text: str, file: str) -> None:
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        Composer.__init__(self)
        self._bound(file)


@functools.cache
def _libyaml_loader() -> type | None:
    """A loader whose scanning and parsing (most of the time of a large inventory) run in
    libyaml, and whose composing stays in Python; None where PyYAML was built without it."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None

    class BoundedCLoader(_BoundedComposer, CParser, SafeConstructor, Resolver):
        def __init__(self, text: str, file: str) -> None:
            CParser.__init__(self, text)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            Composer.__init__(self)
            self._bound(file)

    return BoundedCLoader


class _Builder:
    def __init__(self, source: SourceMap, aliased: set[int]) -> None:
        self.source = source
        self.aliased = aliased
        self.defined: set[int] = set()
        self.copying = 0
        self.alias_values = 0
        self.errors: list[UserError] = []
        self._scalars = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        if len(path) >= MAX_NESTING:
            raise _too_deep(
                self.source.file,
                self.source.line_of(path[:1]),
                path[:1],
                "aliases inside anchored values add a level each",
            )
        # An aliased node is first visited where it is written; every later visit is a copy
        # made by an alias, and so is everything beneath it.
        key = id(node)
        copy = key in self.defined
        if key in self.aliased:
            self.defined.add(key)
        self.copying += copy
        try:
            if self.copying:
                self._count_alias_value(path)
            return self._value(node, path)
        finally:
            self.copying -= copy

    def _count_alias_value(self, path: PathKey) -> None:
        self.alias_values += 1
        if self.alias_values > MAX_ALIAS_VALUES:
            raise UserErrors.single(
                self.source.file,
                format_path(path[:1]),
                f"aliases expand to more than {MAX_ALIAS_VALUES:,} values",
                "&anchor / *alias nested this deep looks like an alias bomb",
                line=self.source.line_of(path[:1]),
            )

    def _value(self, node: yaml.Node, path: PathKey) -> Any:
        self.source.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAPPING_TAG:
                return self._refuse_tag(node, path)
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQUENCE_TAG:
                return self._refuse_tag(node, path)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: PathKey) -> Any:
        """The value of a scalar by YAML's safe typing (str, int, float, bool, null, date);
        an unknown tag, a value its tag cannot read, or a number that is not finite is a
        located error (collected; None stands in for the value)."""
        if node.tag not in _SCALAR_TAGS:
            return self._refuse_tag(node, path)
        try:
            value = self._scalars.construct_object(node, deep=True)
        except (ConstructorError, ValueError, TypeError):
            # e.g. `!!int twelve`, `!!binary` that is not base64, `!!timestamp tomorrow`.
            self._error(node, path, f"{node.value!r} is not a valid {_shown(node.tag)}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            # No field of an inventory, sweep or devices file means infinity; JSON, which
            # every output is, cannot even write it.
            self._error(node, path, f"{node.value!r} is not a finite number", "no infinity or NaN")
            return None
        return value

    def _refuse_tag(self, node: yaml.Node, path: PathKey) -> None:
        self._error(node, path, f"unknown YAML tag {_shown(node.tag)}", _PLAIN_VALUES)

    def _error(self, node: yaml.Node, path: PathKey, message: str, hint: str = "") -> None:
        self.errors.append(
            UserError(self.source.file, node.start_mark.line + 1, format_path(path), message, hint)
        )

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
            key = str(self._scalar(key_node, (*path, str(key_node.value))))
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


def _shown(tag: str) -> str:
    """A tag as it is written: `!!python/none` rather than `tag:yaml.org,2002:python/none`."""
    return "!!" + tag.removeprefix(_YAML_TAG_PREFIX) if tag.startswith(_YAML_TAG_PREFIX) else tag


def size_cap_bytes(file: str) -> int:
    text = os.environ.get(SIZE_CAP_VARIABLE)
    if text is None:
        return DEFAULT_SIZE_CAP_MB * BYTES_PER_MB
    try:
        megabytes = int(text)
    except ValueError:
        megabytes = 0
    if megabytes < 1:
        raise UserErrors.single(
            file,
            "",
            f"{SIZE_CAP_VARIABLE}={text!r} is not a size",
            f"a whole number of MB, e.g. {SIZE_CAP_VARIABLE}={DEFAULT_SIZE_CAP_MB * 4}",
        )
    return megabytes * BYTES_PER_MB


def _too_big(file: str, size: int | None, cap: int) -> UserErrors:
    needed = f"={ceil(size / BYTES_PER_MB)}" if size is not None else " higher"
    described = f"{size:,} bytes" if size is not None else f"more than {cap:,} bytes"
    return UserErrors.single(
        file,
        "",
        f"the file is {described}, over the {cap // BYTES_PER_MB} MB cap on inventory size",
        f"refused before parsing; to parse it anyway set {SIZE_CAP_VARIABLE}{needed}",
        line=1,
    )


def _read_capped(path: Path, file: str) -> bytes:
    cap = size_cap_bytes(file)
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > cap:
                raise _too_big(file, size, cap)
            # Pipes and device files report no size; reading one byte past the cap tells.
            data = stream.read(cap + 1)
    except FileNotFoundError:
        raise UserErrors.single(file, "", "file not found") from None
    except OSError as exc:
        raise UserErrors.single(file, "", f"cannot read file: {exc}") from None
    if len(data) > cap:
        raise _too_big(file, None, cap)
    return data


def _decode(data: bytes, file: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise UserErrors.single(
            file,
            "",
            f"not UTF-8: byte 0x{data[exc.start]:02x} at column {exc.start - line_start + 1} "
            "cannot be decoded",
            "save the file as UTF-8",
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None


# The ASCII characters PyYAML's reader lets through (its NON_PRINTABLE allows no others).
_PRINTABLE_ASCII = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])


def has_non_printable(text: str) -> bool:
    """Whether PyYAML's reader would refuse a character of `text`. Inventories are ASCII,
    and for ASCII two passes in C take a sixth of the time the reader's regex takes."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _PRINTABLE_ASCII))
    return Reader.NON_PRINTABLE.search(text) is not None


def _compose(text: str, file: str) -> tuple[yaml.Node | None, set[int]]:
    # libyaml's messages differ from PyYAML's (and its reader lets different characters
    # through): a file it refuses is parsed again in Python, whose message is the one users
    # and the golden error tests know. Only bad files pay twice.
    fast = _libyaml_loader()
    if fast is not None and not has_non_printable(text):
        try:
            return _compose_with(fast, text, file)
        except yaml.YAMLError:
            pass
    return _python_compose(text, file)


def _compose_with(kind: type, text: str, file: str) -> tuple[yaml.Node | None, set[int]]:
    loader = kind(text, file)
    try:
        return loader.get_single_node(), loader.aliased
    finally:
        loader.dispose()


def _python_compose(text: str, file: str) -> tuple[yaml.Node | None, set[int]]:
    try:
        # The reader rejects control characters as soon as it is built, so that is inside too.
        return _compose_with(_BoundedLoader, text, file)
    except ReaderError as exc:
        raise UserErrors.single(
            file,
            "",
            f"character U+{exc.character:04X} is not allowed in YAML",
            "remove control characters",
            line=text.count("\n", 0, exc.position) + 1,
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or "invalid YAML"
        raise UserErrors.single(
            file, "", f"YAML syntax error: {problem}", "check indentation and quoting", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise UserErrors.single(file, "", f"YAML syntax error: {exc}") from None


def _from_events(text: str, file: str) -> tuple[Any, SourceMap] | None:
    """A plain document built natively or straight from libyaml's events; None when it
    needs nodes."""
    if has_non_printable(text):
        return None
    plain = build_from_plain_text(text, MAX_NESTING)
    if plain is not None:
        return plain[0], SourceMap(file, plain[1])
    if _libyaml_loader() is None:
        return None
    from yaml._yaml import CParser

    try:
        built = build_from_events(CParser(text), MAX_NESTING)
    except yaml.YAMLError:
        return None
    if built is None:
        return None
    value, lines = built
    return value, SourceMap(file, lines)


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Parse `path`; raise UserErrors naming the line of any syntax error or hostile content."""
    file = str(path)
    text = _decode(_read_capped(path, file), file)
    fast = _from_events(text, file)
    if fast is not None:
        return fast
    node, aliased = _compose(text, file)
    if node is None:
        raise UserErrors.single(
            file, "", "the file is empty", "a YAML mapping of keys and values", line=1
        )
    source = SourceMap(file)
    builder = _Builder(source, aliased)
    value = builder.build(node, ())
    if builder.errors:
        raise UserErrors(builder.errors)
    return value, source
