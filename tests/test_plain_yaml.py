"""The native parser of plain block YAML (what `topo generate` writes): where it accepts a
document, its values and line numbers must be exactly the node path's; where the node path
would fail or needs its own handling, it must give up."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory import yaml_source
from fatpaths_cfg.inventory.yaml_events import build_from_plain_text
from fatpaths_cfg.support.block_yaml import dump_block_yaml
from fatpaths_cfg.topologies import generate

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = sorted((REPO / "inventories").glob("*.yaml"))


def _node_path(text: str) -> tuple[object, dict[yaml_source.PathKey, int]]:
    node, aliased = yaml_source._compose_with(yaml_source._BoundedLoader, text, "x.yaml")
    assert node is not None
    source = yaml_source.SourceMap("x.yaml")
    builder = yaml_source._Builder(source, aliased)
    value = builder.build(node, ())
    assert not builder.errors
    return value, source.lines


def _wiring(kind: str, params: dict[str, int | float], seed: int) -> str:
    topology = generate(kind, params, seed)
    switches = [{"name": n, "role": "switch", "ports": 44} for n in topology.switch_names]
    links = [
        {"a": f"{topology.switch_names[u]}:Ethernet{i}", "b": f"{topology.switch_names[v]}:e{i}"}
        for i, (u, v) in enumerate(topology.edges)
    ]
    data = {
        "fabric": f"{kind}-test",
        "defaults": {"platform": "frr", "link_speed": "100G", "mtu": 9216, "lossless": False},
        "switches": switches,
        "links": links,
    }
    return "# Written by a test\n" + dump_block_yaml(data)


@pytest.mark.parametrize(
    ("kind", "params"),
    [("slimfly", {"q": 5}), ("jellyfish", {"nr": 30, "k": 5, "p": 3}), ("fattree", {"k": 4})],
)
def test_generated_wiring_is_parsed_natively_with_the_node_paths_values_and_lines(
    kind: str, params: dict[str, int | float]
) -> None:
    text = _wiring(kind, params, 3)
    native = build_from_plain_text(text, yaml_source.MAX_NESTING)
    assert native is not None
    assert native == _node_path(text)
    assert native[0]["defaults"]["link_speed"] == "100G"  # left to the resolver, typed as str


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.name)
def test_example_inventories_parse_alike_or_take_libyaml(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    native = build_from_plain_text(text, yaml_source.MAX_NESTING)
    if native is not None:
        assert native == _node_path(text)


def test_scalars_left_untyped_are_typed_by_the_resolver() -> None:
    text = "a: 0x1f\nb: 1_000\nc: 2.5\nd: 2024-01-01\ne: 012\nf: 1e3\ng: 1:30\nh: -7\ni: +3\n"
    native = build_from_plain_text(text, yaml_source.MAX_NESTING)
    assert native is not None
    assert native == _node_path(text)
    assert native[0]["a"] == 31 and native[0]["g"] == 90 and native[0]["h"] == -7


@pytest.mark.parametrize("spelling", [".inf", "-.Inf", ".nan", "1.0e+999"])
def test_a_number_that_is_not_finite_gives_up(spelling: str) -> None:
    # The node path reports it at its line; the fast path must not build it silently.
    assert build_from_plain_text(f"a: 1\nb: {spelling}\n", yaml_source.MAX_NESTING) is None


def test_a_merge_key_spelled_as_a_value_gives_up() -> None:
    assert build_from_plain_text("a: <<\n", yaml_source.MAX_NESTING) is None


# Characters that change what a line means in YAML, spliced into a plain document at random.
_HOSTILE = [
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    "#",
    " #",
    "&a ",
    "*a",
    "!",
    "|",
    ">",
    ": ",
    ":",
    "- ",
    "-",
    " ",
    "  ",
    "\t",
    "\n",
    "\n  ",
    "?",
    "%",
    "@",
    "`",
    ",",
    "~",
    "0",
    "1.5",
    "yes",
    "null",
    "---",
    "...",
    "<<",
    "\r",
]


def test_random_damage_is_parsed_alike_or_given_up() -> None:
    base = _wiring("jellyfish", {"nr": 6, "k": 3, "p": 1}, 1)
    rng = random.Random(20261125)
    accepted = 0
    for _ in range(3000):
        text = base
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            cut = rng.choice([0, 0, 1, 2])
            text = text[:at] + rng.choice(_HOSTILE) + text[at + cut :]
        native = build_from_plain_text(text, yaml_source.MAX_NESTING)
        if native is None:
            continue
        try:
            expected = _node_path(text)
        except (yaml.YAMLError, UserErrors, AssertionError):
            pytest.fail(f"native accepted what the node path rejects:\n{text}")
        assert native == expected, text
        accepted += 1
    # Most single splices keep the document plain: the comparison above did run.
    assert accepted > 500


def test_round_trip_of_what_the_block_writer_writes() -> None:
    rng = random.Random(7)
    words = ["sf-0-1", "Ethernet12", "a:b", "x.y", "_tmp", "/dev/net", "v1", "100G", "null-ish"]
    for _ in range(200):
        data = {
            f"k{i}": rng.choice(
                [
                    rng.choice(words),
                    rng.randint(-(10**12), 10**12),
                    rng.choice([True, False]),
                    [{"name": rng.choice(words), "n": rng.randint(0, 9)} for _ in range(3)],
                    {"inner": rng.choice(words), "deep": {"z": rng.randint(0, 5)}},
                ]
            )
            for i in range(rng.randint(1, 6))
        }
        text = dump_block_yaml(data)
        native = build_from_plain_text(text, yaml_source.MAX_NESTING)
        assert native is not None, text
        assert native[0] == data
        assert native == _node_path(text)
