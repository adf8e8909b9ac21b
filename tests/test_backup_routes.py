"""Backup routes (`routing.backup: lfa`): the choice of loop-free alternates, their place in the
compiled output and in rendered configs, and the platforms that refuse them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import api
from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.load import load_inventory
from fatpaths_cfg.inventory.schema import RoutingSpec
from fatpaths_cfg.layers import Layer
from fatpaths_cfg.routing import (
    UNREACHABLE,
    backup_coverage,
    compute_routing,
    layer_neighbours,
    loop_free_alternates,
)
from fatpaths_cfg.support.stable_hash import name_keys

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def _alternates(nr: int, cables: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(next_hop, backup) of one full layer over `cables`, switches named s0, s1, ..."""
    edges = np.array(cables, dtype=np.int64)
    layers = [Layer(1, np.ones(len(edges), dtype=bool), "full", None)]
    keys = name_keys(f"s{i}" for i in range(nr))
    routing = compute_routing(nr, edges, layers, 1, switch_keys=keys)
    backup = loop_free_alternates(nr, edges, layers, routing, 1, keys)
    return routing.next_hop[0], backup[0]


def test_ring_of_five_has_an_alternate_exactly_where_inequality_one_holds() -> None:
    # s0 -> s2 (2 hops, via s1): s4 is 2 hops from s2, fewer than 1 + 2 through s0.
    # s0 -> s1 (1 hop): s4 is 2 hops from s1, not fewer than 1 + 1: no alternate.
    next_hop, backup = _alternates(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)])
    assert next_hop[0, 2] == 1 and backup[0, 2] == 4
    assert next_hop[0, 3] == 4 and backup[0, 3] == 1
    assert backup[0, 1] == -1 and backup[0, 4] == -1
    assert (np.diag(backup) == -1).all()


def test_a_downstream_alternate_wins_over_one_that_is_only_loop_free() -> None:
    # s0 reaches s3 in two hops through s1 or s2 (downstream: 1 hop from s3); s5 is two hops
    # from s3 (loop-free, not downstream). Whichever of s1, s2 is primary, the other backs it.
    next_hop, backup = _alternates(7, [(0, 1), (1, 3), (0, 2), (2, 3), (0, 5), (5, 6), (6, 3)])
    assert {int(next_hop[0, 3]), int(backup[0, 3])} == {1, 2}


def test_a_switch_with_one_cable_has_no_alternate() -> None:
    _, backup = _alternates(4, [(0, 1), (1, 2), (2, 3), (3, 1)])
    assert (backup[0] == -1).all()
    assert backup[1, 0] == -1  # s0 hangs on one cable: nothing else reaches it


@pytest.fixture(scope="module")
def slimfly() -> CompiledFabric:
    loaded = load_inventory(INVENTORIES / "slimfly-q5.yaml")
    spec = loaded.spec.routing.model_copy(update={"backup": "lfa"})
    return api.compile_loaded(loaded, spec)


def test_every_backup_is_a_loop_free_alternate_and_every_alternate_is_used(
    slimfly: CompiledFabric,
) -> None:
    fabric, routing = slimfly.fabric, slimfly.routing
    assert routing.backup is not None
    for i, layer in enumerate(slimfly.layers):
        neighbours = layer_neighbours(fabric.nr, fabric.edges, layer.links)
        dist = routing.dist[i].astype(np.int64)
        for s in range(fabric.nr):
            own = set(neighbours[s].tolist())
            for t in range(fabric.nr):
                if s == t or dist[s, t] == UNREACHABLE:
                    continue
                primary, alternate = int(routing.next_hop[i, s, t]), int(routing.backup[i, s, t])
                candidates = [
                    n for n in own if n != primary and dist[n, t] < dist[n, s] + dist[s, t]
                ]
                if not candidates:
                    assert alternate == -1
                    continue
                assert alternate in candidates
                if any(dist[n, t] < dist[s, t] for n in candidates):
                    assert dist[alternate, t] < dist[s, t]  # downstream first


def test_coverage_is_a_share_per_layer(slimfly: CompiledFabric) -> None:
    coverage = backup_coverage(slimfly.routing)
    assert len(coverage) == len(slimfly.layers)
    assert all(0.0 < share <= 1.0 for share in coverage)
    # Layer 1 of a Slim Fly (diameter 2, no triangles through most pairs) still protects most.
    assert coverage[0] > 0.5


def test_backups_are_chosen_by_names_not_positions(slimfly: CompiledFabric) -> None:
    loaded = load_inventory(INVENTORIES / "slimfly-q5.yaml")
    spec = loaded.spec.routing.model_copy(update={"backup": "lfa"})
    again = api.compile_loaded(loaded, spec)
    assert again.routing.backup is not None and slimfly.routing.backup is not None
    assert (again.routing.backup == slimfly.routing.backup).all()


def test_without_backup_the_output_keeps_its_bytes() -> None:
    compiled = api.compile_fabric(INVENTORIES / "hand-6.yaml")
    assert compiled.routing.backup is None
    assert "backup" not in compiled.to_json()["routing"]
    assert set(compiled.routing_arrays()) == {"dist", "next_hop"}


def test_backup_is_stored_in_the_model_when_on(slimfly: CompiledFabric) -> None:
    assert slimfly.to_json()["routing"]["backup"] == "lfa"
    arrays = slimfly.routing_arrays()
    assert arrays["backup"].dtype == np.int32
    assert arrays["backup"].shape == arrays["next_hop"].shape
    json.dumps(slimfly.to_json())  # stays plain JSON


def test_frr_renders_a_floating_route_per_backup(slimfly: CompiledFabric) -> None:
    tree = api.build_output(slimfly, platforms=["frr"])
    switch = slimfly.fabric.switches[0].name
    text = tree.files[f"configs/frr/{switch}/frr.conf"].decode()
    floating = [line for line in text.splitlines() if line.endswith(" 250")]
    assert slimfly.routing.backup is not None
    assert len(floating) == int((slimfly.routing.backup[:, 0] >= 0).sum())
    assert all(line.startswith("ip route ") for line in floating)


def test_linux_refuses_backup_routes_naming_the_platform(slimfly: CompiledFabric) -> None:
    with pytest.raises(UserErrors) as raised:
        api.build_output(slimfly, platforms=["linux"])
    text = str(raised.value)
    assert "platform linux cannot hold backup routes" in text
    assert "routing.backup" in text


@pytest.mark.parametrize("other", [{"ecmp_within_layer": True}, {"acyclic": True}])
def test_backup_refuses_equal_cost_and_up_down_layers(other: dict[str, bool]) -> None:
    with pytest.raises(ValueError, match="backup and"):
        RoutingSpec.model_validate({"backup": "lfa", **other})


def test_unknown_backup_scheme_is_refused() -> None:
    with pytest.raises(ValueError):
        RoutingSpec.model_validate({"backup": "tilfa"})
