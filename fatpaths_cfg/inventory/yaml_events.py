"""The fast path of inventory loading: values built straight from libyaml's events.

A generated Slim Fly q=19 inventory is 270k events; composing them into PyYAML nodes and
walking those again costs seconds in Python. Plain documents (no anchors, aliases, explicit
tags, merge or duplicate keys, complex keys, infinities or NaN, and nesting well under the cap)
are built here in one pass, with the line of every value and key recorded exactly as the node
builder records them. Anything else returns None and takes the node path, which handles (and
reports) it all.
"""

from __future__ import annotations

import math
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

PathKey = tuple[str | int, ...]
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"


class _NodePath(Exception):
    """The document needs the node path."""


class _Scalars:
    """YAML 1.1 safe typing of plain scalars, as SafeLoader gives it: the resolver's own table
    decides the tag, the safe constructor builds the value."""

    def __init__(self) -> None:
        self.constructor = SafeConstructor()
        self.table = Resolver.yaml_implicit_resolvers

    def value(self, event: Any) -> Any:
        if event.anchor is not None or event.tag not in (None, "!"):
            raise _NodePath
        text = event.value
        if not event.implicit[0] or event.tag == "!":
            return text
        return self.plain(text)

    def plain(self, text: str) -> Any:
        """A plain scalar's value."""
        tag = self.tag(text)
        if tag == _STR:
            return text
        if tag == _MERGE:
            raise _NodePath
        value = self.constructor.construct_object(yaml.ScalarNode(tag, text), deep=True)
        if isinstance(value, float) and not math.isfinite(value):
            raise _NodePath  # .inf, .nan, 1e999: the node path reports them, located
        return value

    def tag(self, text: str) -> str:
        for tag, pattern in self.table.get(text[0] if text else "", ()):
            if pattern.match(text):
                return str(tag)
        return _STR


def build_from_plain_text(text: str, max_nesting: int) -> tuple[Any, dict[PathKey, int]] | None:
    """(value, line of every path) of a document in the plain block style `topo generate`
    writes, parsed natively without libyaml's events; None when the text leaves that subset.
    The native parser types what a plain scalar's spelling decides; the rest (numbers other
    than plain decimals, dates, `.inf`) is typed here by the same resolver table."""
    from fatpaths_cfg._native import load_plain_yaml

    loaded = load_plain_yaml(text, max_nesting)
    if loaded is None:
        return None
    value, lines, untyped = loaded
    scalars = _Scalars()
    for path in untyped:
        *parents, last = path
        container = value
        for key in parents:
            container = container[key]
        try:
            container[last] = scalars.plain(container[last])
        except _NodePath:
            return None
    return value, lines


def build_from_events(parser: Any, max_nesting: int) -> tuple[Any, dict[PathKey, int]] | None:
    """(value, line of every path) of a single plain document, or None for the node path.

    `parser` yields libyaml events (`get_event`); syntax errors propagate as YAMLError.
    """
    try:
        return _Events(parser, max_nesting).document()
    except _NodePath:
        return None


class _Events:
    def __init__(self, parser: Any, max_nesting: int) -> None:
        self.parser = parser
        self.max_nesting = max_nesting
        self.lines: dict[PathKey, int] = {}
        self.scalars = _Scalars()

    def next(self) -> Any:
        event = self.parser.get_event()
        if isinstance(event, yaml.AliasEvent):
            raise _NodePath
        return event

    def document(self) -> tuple[Any, dict[PathKey, int]] | None:
        self.next()  # stream start
        event = self.next()
        if isinstance(event, yaml.StreamEndEvent):
            return None  # empty: the node path says so
        value = self.value(self.next(), ())
        self.next()  # document end
        if not isinstance(self.next(), yaml.StreamEndEvent):
            raise _NodePath  # several documents: the node path reports it
        return value, self.lines

    def value(self, event: Any, path: PathKey) -> Any:
        if len(path) + 1 >= self.max_nesting:
            raise _NodePath
        self.lines.setdefault(path, event.start_mark.line + 1)
        kind = type(event)
        if kind is yaml.ScalarEvent:
            return self.scalars.value(event)
        if kind is yaml.AliasEvent or event.anchor is not None or event.tag not in (None, "!"):
            raise _NodePath
        if kind is yaml.SequenceStartEvent:
            return self.sequence(path)
        return self.mapping(path)

    # The two loops below see every one of a large inventory's events: they call the parser
    # directly (value() turns an alias away) and compare exact event types.
    def sequence(self, path: PathKey) -> list[Any]:
        items: list[Any] = []
        get_event = self.parser.get_event
        while type(event := get_event()) is not yaml.SequenceEndEvent:
            items.append(self.value(event, (*path, len(items))))
        return items

    def mapping(self, path: PathKey) -> dict[str, Any]:
        result: dict[str, Any] = {}
        get_event, lines, scalar = self.parser.get_event, self.lines, self.scalars.value
        while type(event := get_event()) is not yaml.MappingEndEvent:
            if type(event) is not yaml.ScalarEvent:
                raise _NodePath
            key = str(scalar(event))
            if key in result:
                raise _NodePath
            child = (*path, key)
            # libyaml marks every event; PyYAML's types allow a mark to be missing.
            lines.setdefault(child, event.start_mark.line + 1)  # type: ignore[union-attr]
            result[key] = self.value(get_event(), child)
        return result
