"""Inventories parse through libyaml where PyYAML has it; values and line numbers must be the
ones the pure-Python parser gives, and the hostile-input caps must still hold on that path."""

from __future__ import annotations

from pathlib import Path

import pytest
from yaml.reader import Reader

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory import yaml_source

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = sorted((REPO / "inventories").glob("*.yaml"))


def _load_with(kind: type, path: Path) -> tuple[object, dict[yaml_source.PathKey, int]]:
    text = path.read_text(encoding="utf-8")
    node, aliased = yaml_source._compose_with(kind, text, str(path))
    assert node is not None
    source = yaml_source.SourceMap(str(path))
    return yaml_source._Builder(source, aliased).build(node, ()), source.lines


def test_libyaml_is_used() -> None:
    assert yaml_source._libyaml_loader() is not None


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.name)
def test_same_values_and_lines_as_python(path: Path) -> None:
    fast = yaml_source._libyaml_loader()
    assert fast is not None
    assert _load_with(fast, path) == _load_with(yaml_source._BoundedLoader, path)


def test_nesting_cap_holds_on_the_libyaml_path(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("fabric: x\nlinks: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(UserErrors) as caught:
        yaml_source.load_yaml(deep)
    assert "nested more than 64 levels deep" in str(caught.value.errors[0].message)
    assert caught.value.errors[0].line == 2


def test_syntax_errors_keep_pythons_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("fabric: x\nswitches: [a, b\nlinks: []\n", encoding="utf-8")
    with pytest.raises(UserErrors) as caught:
        yaml_source.load_yaml(bad)
    # PyYAML's wording; libyaml would say "did not find expected ',' or ']'".
    assert "while parsing a flow sequence" not in caught.value.errors[0].message
    assert caught.value.errors[0].message.startswith("YAML syntax error: expected ',' or ']'")


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.name)
def test_the_event_path_gives_what_the_node_path_gives(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = yaml_source._from_events(text, str(path))
    assert fast is not None, "a plain inventory should not need the node path"
    assert (fast[0], fast[1].lines) == _load_with(yaml_source._BoundedLoader, path)


TYPED = """\
fabric: x
a: 1
b: 1.5
c: yes
d: null
e:
f: '1'
g: 2024-01-01
h: [1, "two", 0x1f, 2.5e3]
1: key
"""


def test_the_event_path_types_scalars_like_safe_load(tmp_path: Path) -> None:
    path = tmp_path / "typed.yaml"
    path.write_text(TYPED, encoding="utf-8")
    fast = yaml_source._from_events(TYPED, str(path))
    assert fast is not None
    assert (fast[0], fast[1].lines) == _load_with(yaml_source._BoundedLoader, path)
    # A number that is not finite leaves the fast path, for the node path to refuse it.
    assert yaml_source._from_events(TYPED.replace("2.5e3", ".inf"), str(path)) is None


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # aliases: counted on the node path
        "a: 1\na: 2\n",  # duplicate key: reported on the node path
        "a: !!str 1\n",  # explicit tag
        "<<: {a: 1}\n",  # merge key
        "? [a]\n: 1\n",  # complex key
        "a: 1\n---\nb: 2\n",  # two documents
        "",
        "a: [1\n",  # syntax error: PyYAML's message on the node path
    ],
)
def test_anything_unusual_takes_the_node_path(text: str) -> None:
    assert yaml_source._from_events(text, "x.yaml") is None


@pytest.mark.parametrize("code", range(0x80))
def test_non_printable_check_agrees_with_the_reader_on_every_ascii_character(code: int) -> None:
    text = f"fabric: x{chr(code)}\n"
    refused = Reader.NON_PRINTABLE.search(text) is not None
    assert yaml_source.has_non_printable(text) == refused


@pytest.mark.parametrize("text", ["a: é\n", "a: \x85\n", "a: \ufffe\n", "a: \x07é\n", "ok\n", ""])
def test_non_printable_check_agrees_with_the_reader_beyond_ascii(text: str) -> None:
    assert yaml_source.has_non_printable(text) == (Reader.NON_PRINTABLE.search(text) is not None)
