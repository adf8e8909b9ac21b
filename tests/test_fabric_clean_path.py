"""The error-free pass of the wiring checker builds exactly what the full one does, and hands
everything else to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.fabric import Fabric, _WiringChecker, build_fabric, canonical_order
from fatpaths_cfg.inventory.expand import expand_generator
from fatpaths_cfg.inventory.load import LoadedInventory, load_inventory, validate_inventory
from fatpaths_cfg.inventory.yaml_source import SourceMap

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = sorted((REPO / "inventories").glob("*.yaml"))


def _both_passes(loaded: LoadedInventory) -> tuple[Fabric | None, Fabric]:
    spec = loaded.spec if loaded.spec.generate is None else expand_generator(loaded)
    clean = _WiringChecker(spec, loaded.source, locate_ports=False).build_if_clean()
    return clean, _WiringChecker(spec, loaded.source).build()


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda path: path.stem)
def test_clean_pass_builds_what_the_full_checker_builds(path: Path) -> None:
    clean, full = _both_passes(load_inventory(path))
    if "planes" in path.stem:
        assert clean is None  # several planes are left to the full checker
    else:
        assert clean == full


def _inventory(links: list[dict[str, str]], hosts: list[dict[str, Any]]) -> LoadedInventory:
    data = {
        "fabric": "f",
        "switches": [{"name": "s0", "ports": 4}, {"name": "s1"}, {"name": "s2"}],
        "links": links,
        "hosts": hosts,
    }
    return validate_inventory(data, SourceMap("f.yaml"), Path("f.yaml"))


def test_clean_pass_keeps_ports_of_undeclared_switches_in_cabling_order() -> None:
    loaded = _inventory(
        [{"a": "s0:Ethernet2", "b": "s1:b/2"}, {"a": "s1:a1", "b": "s2:x"}],
        [{"name": "h0", "uplink": "s2:h"}, {"name": "h1", "uplinks": ["s1:c"]}],
    )
    clean, full = _both_passes(loaded)
    assert clean is not None and clean == full
    assert clean.switches[1].ports == ("b/2", "a1", "c")


@pytest.mark.parametrize(
    ("links", "hosts"),
    [
        ([{"a": "s0:Ethernet1", "b": "s0:Ethernet1"}], []),  # one port looped
        ([{"a": "s0:Ethernet1", "b": "s0:Ethernet2"}], []),  # a switch to itself
        ([{"a": "s0:Ethernet9", "b": "s1:a"}], []),  # undeclared port
        ([{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s1:b", "b": "s0:Ethernet2"}], []),  # parallel
        ([{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s0:Ethernet1", "b": "s2:a"}], []),  # reused
        ([{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s9:a", "b": "s2:a"}], []),  # unknown switch
        ([{"a": "s0:Ethernet1", "b": "s1:a"}], []),  # s2 cut off
        ([{"a": "s0:Ethernet1", "b": "s1:a/1"}, {"a": "s1:a_1", "b": "s2:a"}], []),  # kernel name
        (
            [{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s1:b", "b": "s2:a"}],
            [{"name": "s1", "uplink": "s2:h"}],  # a host named as a switch
        ),
        (
            [{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s1:b", "b": "s2:a"}],
            [{"name": "h", "uplink": "s2:h"}, {"name": "h", "uplink": "s2:i"}],  # twice
        ),
        (
            [{"a": "s0:Ethernet1", "b": "s1:a"}, {"a": "s1:b", "b": "s2:a"}],
            [{"name": "h", "uplink": "s2:a"}],  # onto a cabled port
        ),
    ],
)
def test_clean_pass_leaves_every_mistake_to_the_full_checker(
    links: list[dict[str, str]], hosts: list[dict[str, str]]
) -> None:
    loaded = _inventory(links, hosts)
    spec = loaded.spec
    assert _WiringChecker(spec, loaded.source, locate_ports=False).build_if_clean() is None
    with pytest.raises(UserErrors) as full:
        _WiringChecker(spec, loaded.source).build()
    with pytest.raises(UserErrors) as built:
        build_fabric(loaded)
    assert str(built.value) == str(full.value)


def test_trailing_newline_of_a_port_is_left_to_the_full_checker() -> None:
    # ENDPOINT's '$' matches before a final newline and its port group leaves it out.
    loaded = _inventory(
        [{"a": "s0:Ethernet1", "b": "s1:a\n"}, {"a": "s1:b", "b": "s2:a"}],
        [{"name": "h0", "uplink": "s2:h"}],
    )
    clean, full = _both_passes(loaded)
    assert clean is None
    assert build_fabric(loaded) == canonical_order(full)
    assert full.switches[1].ports == ("a", "b")
