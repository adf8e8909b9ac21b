"""The fast block-YAML writer must produce PyYAML's exact bytes, for plain data and tricky
scalars alike (those fall back to PyYAML, and must still read back as what was written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fatpaths_cfg.fabric import build_fabric
from fatpaths_cfg.inventory.expand import run_generator, topology_wiring
from fatpaths_cfg.inventory.load import load_inventory
from fatpaths_cfg.lab.clab import ClabImages, build_clab
from fatpaths_cfg.support.block_yaml import dump_block_yaml

REPO = Path(__file__).resolve().parent.parent


def _pyyaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, width=120)


TRICKY = [
    "plain",
    "a b",
    "x: y",
    "a:b",
    "yes",
    "No",
    "null",
    "~",
    "1",
    "0x1f",
    "1e3",
    "12:30",
    ".5",
    ".inf",
    "..",
    "../configs/frr/a.conf:/etc/frr.conf:ro",
    "-a",
    "a #b",
    "#a",
    "=",
    "<<",
    "a  b",
    " a",
    "a ",
    "é",
    "'q'",
    '"q"',
    "a" * 130,
    "w " * 70,
    "",
    "@x",
    "_x",
    "a=b",
    "100G",
    "2024-01-01",
    "1_000",
    "0o17",
    "1.5",
    "190:20:30",
    "6e",
    "1.0e+3",
    "0b101",
    "+1",
    "y",
    "n",
    "NaN",
    ".NaN",
    "1.",
]


@pytest.mark.parametrize("value", TRICKY)
def test_scalars_match_pyyaml(value: str) -> None:
    data = {"k": value, "seq": [value, 3], "nested": {value or "e": [{"a": value, "b": 7}]}}
    assert dump_block_yaml(data) == _pyyaml(data)
    assert yaml.safe_load(dump_block_yaml(data)) == data


def test_collections_match_pyyaml() -> None:
    data: dict[str, Any] = {
        "empty_list": [],
        "empty_map": {},
        "lists": [[1, 2], {"x": [{"y": "z"}]}],
        "flags": [True, None, 1.5],
    }
    assert dump_block_yaml(data) == _pyyaml(data)


def test_containerlab_file_matches_pyyaml() -> None:
    loaded = load_inventory(REPO / "inventories" / "slimfly-q5.yaml")
    data = build_clab(build_fabric(loaded), ClabImages())
    assert dump_block_yaml(data) == _pyyaml(data)


def test_generated_inventory_matches_pyyaml() -> None:
    topology = run_generator("slimfly", {"q": 5, "seed": 1}, "<test>", lambda _: 0)
    data = {"fabric": "sf", "defaults": {"platform": "frr"}, **topology_wiring(topology)}
    assert dump_block_yaml(data) == _pyyaml(data)


def test_generated_inventory_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Falling back is correct but slow (PyYAML's representer is Python): the documents
    # fatpaths writes, speeds like 100G included, must not need it.
    def refuse(*_: Any, **__: Any) -> str:
        raise AssertionError("fell back to PyYAML")

    topology = run_generator("slimfly", {"q": 5, "seed": 1}, "<test>", lambda _: 0)
    data = {"fabric": "sf-q5", "defaults": {"platform": "frr", "link_speed": "100G"}}
    expected = _pyyaml({**data, **topology_wiring(topology)})
    monkeypatch.setattr(yaml, "dump", refuse)
    assert dump_block_yaml({**data, **topology_wiring(topology)}) == expected
