"""Channel dependency graphs and the PFC class assignment, on cases whose answer is known."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fatpaths_cfg import api
from fatpaths_cfg.layers import Layer, seeded_keys, up_down_order
from fatpaths_cfg.routing import compute_routing
from fatpaths_cfg.verify.deadlock import (
    LayerRoutes,
    dependency_edges,
    find_cycle,
    is_acyclic,
    layer_route_dependencies,
)
from fatpaths_cfg.verify.pfc import assign_pfc_classes

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


def _ring_routing(nr: int) -> np.ndarray:
    edges = np.array([(i, (i + 1) % nr) for i in range(nr)], dtype=np.int32)
    edges = np.sort(edges, axis=1)
    layer = Layer(1, np.ones(nr, dtype=bool), "full", None)
    return compute_routing(nr, edges, [layer], seed=1).next_hop[0]


def test_ring_with_shortest_paths_is_cyclic_and_the_cycle_goes_round_the_ring() -> None:
    next_hop = _ring_routing(5)
    deps = dependency_edges(next_hop)
    assert not is_acyclic(deps)
    cycle = find_cycle(deps, 5)
    # Shortest paths on a 5-ring go two hops one way: the witness is the ring in one direction.
    assert len(cycle) == 5
    for (a, b), (c, _) in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        assert b == c
        assert (b - a) % 5 in (1, 4)


def test_route_dependencies_from_triples_equal_those_from_the_table() -> None:
    next_hop = _ring_routing(7)
    s, t = np.nonzero(next_hop >= 0)
    columns = (np.ascontiguousarray(c, dtype=np.int32) for c in (s, t, next_hop[s, t]))
    routes = LayerRoutes(1, np.ones(len(s), dtype=np.uint16), *columns)
    triples = layer_route_dependencies(7, routes)[1]
    assert np.array_equal(triples, dependency_edges(next_hop))


def test_a_line_is_cycle_free_and_has_no_witness() -> None:
    nr = 4
    edges = np.array([(0, 1), (1, 2), (2, 3)], dtype=np.int32)
    layer = Layer(1, np.ones(3, dtype=bool), "full", None)
    deps = dependency_edges(compute_routing(nr, edges, [layer], seed=1).next_hop[0])
    assert len(deps) > 0
    assert is_acyclic(deps)
    assert find_cycle(deps, nr) == []


def _layer_deps(next_hop: np.ndarray, layers: list[Layer]) -> dict[int, np.ndarray]:
    return {layer.number: dependency_edges(next_hop[i]) for i, layer in enumerate(layers)}


def test_layers_with_their_own_orders_are_cycle_free_but_clash() -> None:
    # Each layer climbs and descends its own random order (what acyclic mode did before it
    # shared one order), so two layers together close cycles: four layers need four lossless
    # classes, and the exact search proves that three do not do.
    compiled = api.compile_fabric(INVENTORIES / "slimfly-q5-acyclic.yaml")
    fabric = compiled.fabric
    layers = []
    for layer in compiled.layers:
        keys = seeded_keys(fabric.switch_keys, layer.number)
        rank, tree = up_down_order(fabric.nr, fabric.edges, keys)
        layers.append(replace(layer, links=layer.links | tree, rank=rank))
    routing = compute_routing(fabric.nr, fabric.edges, layers, compiled.seed)
    deps = _layer_deps(routing.next_hop, layers)
    assert all(is_acyclic(d) for d in deps.values())
    assert not assign_pfc_classes(deps, max_classes=3).feasible
    plan = assign_pfc_classes(deps, max_classes=4)
    assert plan.feasible and plan.classes is not None
    assert sorted(n for c in plan.classes for n in c.layers) == [1, 2, 3, 4]
    assert len({c.priority for c in plan.classes}) == len(plan.classes)
    for members in plan.classes:
        assert is_acyclic(np.concatenate([deps[n] for n in members.layers]))


def test_acyclic_mode_layers_share_one_order_and_one_class() -> None:
    compiled = api.compile_fabric(INVENTORIES / "slimfly-q5-acyclic.yaml")
    layers = compiled.layers
    assert all(layer.rank is not None for layer in layers)
    assert all(np.array_equal(layer.rank, layers[0].rank) for layer in layers)
    assert not np.array_equal(layers[1].links, layers[2].links)  # still different layers
    plan = assign_pfc_classes(_layer_deps(compiled.routing.next_hop, layers), max_classes=1)
    assert plan.feasible and plan.classes is not None
    assert plan.classes[0].layers == (1, 2, 3, 4)
    assert plan.method == "greedy"


def test_minimal_slimfly_layers_are_cyclic_so_no_lossless_plan_exists() -> None:
    compiled = api.compile_fabric(INVENTORIES / "slimfly-q5.yaml")
    plan = assign_pfc_classes(_layer_deps(compiled.routing.next_hop, compiled.layers), 8)
    assert not plan.feasible
    assert 1 in plan.cyclic_layers
    assert "acyclic" in plan.reason


def test_exact_search_finds_the_split_first_fit_misses() -> None:
    # Channels are plain ids here. A+B, C+D and B+D each close a two-channel cycle; A+C,
    # A+D and B+C do not. First fit (equal sizes, so in order A, B, C, D) puts A with C and B
    # alone, then D fits nowhere; {A, D} + {B, C} works.
    deps = {
        1: np.array([(1, 2), (10, 11)]),  # A
        2: np.array([(2, 1), (5, 6)]),  # B
        3: np.array([(3, 4), (12, 13)]),  # C
        4: np.array([(4, 3), (6, 5)]),  # D
    }
    # Sanity of the construction: every layer is fine alone.
    assert all(is_acyclic(d) for d in deps.values())
    plan = assign_pfc_classes(deps, max_classes=2)
    assert plan.feasible and plan.classes is not None
    for members in plan.classes:
        assert is_acyclic(np.concatenate([deps[n] for n in members.layers]))
    assert plan.method == "exact"
    one = assign_pfc_classes(deps, max_classes=1)
    assert not one.feasible
    assert "4 cycle-free layers into 1" in one.reason


def test_too_many_classes_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_classes"):
        assign_pfc_classes({1: np.zeros((0, 2), np.int64)}, max_classes=9)
