"""Sparse-layer algorithms: overlap minimisation (FatPaths Listing 2) and the baselines."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from fatpaths_cfg import _native
from fatpaths_cfg.inventory.schema import RoutingSpec
from fatpaths_cfg.layers import SparseLayerBuilder, build_layers, complete_layer
from fatpaths_cfg.layers.baselines import (
    kshortest_layers,
    past_layers,
    plan_kshortest_layers,
    plan_past_layers,
    plan_spain_layers,
    spain_layers,
)
from fatpaths_cfg.layers.overlap import overlap_layers, plan_overlap_layers
from fatpaths_cfg.topologies import generate

SPARSE_LAYERS = 8


@pytest.fixture(scope="module")
def slimfly5() -> tuple[int, np.ndarray]:
    edges = np.array(generate("slimfly", {"q": 5}, 1).edges, dtype=np.int32)
    return int(edges.max()) + 1, edges


def _graph(nr: int, edges: np.ndarray, mask: np.ndarray) -> sp.csr_matrix:
    kept = edges[mask]
    ones = np.ones(len(kept), dtype=np.int8)
    return sp.csr_matrix((ones, (kept[:, 0], kept[:, 1])), shape=(nr, nr))


def _hops(nr: int, edges: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return shortest_path(_graph(nr, edges, mask), directed=False, unweighted=True)


def _spec(algorithm: str, **extra: object) -> RoutingSpec:
    return RoutingSpec.model_validate({"layers": SPARSE_LAYERS + 1, "algorithm": algorithm,
                                       **extra})


BUILDERS: dict[str, SparseLayerBuilder] = {
    "overlap": overlap_layers,
    "spain": spain_layers,
    "past": past_layers,
    "kshortest": kshortest_layers,
}


@pytest.mark.parametrize("algorithm", sorted(BUILDERS))
def test_same_seed_same_layers_other_seed_other_layers(
        slimfly5: tuple[int, np.ndarray], algorithm: str) -> None:
    nr, edges = slimfly5
    builder, spec = BUILDERS[algorithm], _spec(algorithm)
    first = builder(nr, edges, SPARSE_LAYERS, np.random.default_rng(11), spec)
    again = builder(nr, edges, SPARSE_LAYERS, np.random.default_rng(11), spec)
    other = builder(nr, edges, SPARSE_LAYERS, np.random.default_rng(12), spec)
    assert len(first) == SPARSE_LAYERS
    assert all(mask.dtype == bool and mask.shape == (len(edges),) for mask in first)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_overlap_paths_are_monotone_and_shortest_in_their_layer(
        slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    rng = np.random.default_rng(3)
    plan = plan_overlap_layers(nr, edges, SPARSE_LAYERS, rng, _spec("overlap"))
    fabric_hops = _hops(nr, edges, np.ones(len(edges), dtype=bool))
    for mask, permutation, paths in zip(plan.masks, plan.permutations, plan.paths, strict=True):
        assert len(paths) > nr, "a layer should hold more paths than there are switches"
        rank = np.argsort(permutation)
        # Completion joins islands only, so it must not shorten any chosen path either.
        completed, _ = complete_layer(nr, edges, mask, rng)
        for links in (mask, completed):
            layer_hops = _hops(nr, edges, links)
            for path in paths:
                assert np.all(np.diff(rank[path]) > 0)
                first, last = int(path[0]), int(path[-1])
                assert layer_hops[first, last] == len(path) - 1
                assert fabric_hops[first, last] < len(path) - 1 <= fabric_hops.max() + 1


def test_paths_per_layer_bounds_each_layer(slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    plan = plan_overlap_layers(nr, edges, 3, np.random.default_rng(5),
                               _spec("overlap", paths_per_layer=7))
    assert [len(paths) for paths in plan.paths] == [7, 7, 7]
    assert all(mask.sum() <= 7 * 3 for mask in plan.masks)


def _overlap_over_chance(masks: list[np.ndarray]) -> float:
    """Mean shared links of two layers relative to what independent layers would share."""
    links = np.stack(masks).astype(float)
    ratios = [links[i] @ links[j] / (links[i].sum() * links[j].sum() / links.shape[1])
              for i, j in itertools.combinations(range(len(masks)), 2)]
    return float(np.mean(ratios))


def test_overlap_layers_share_fewer_links_than_random_layers_of_equal_density(
        slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    seeds = range(1, 5)
    spec = _spec("overlap", paths_per_layer=nr)
    built = [build_layers(nr, edges, spec, seed)[1:] for seed in seeds]
    density = float(np.mean([layer.links.mean() for layers in built for layer in layers]))
    sampled = [build_layers(nr, edges, _spec("random", rho=density), seed)[1:]
               for seed in seeds]
    overlap = np.mean([_overlap_over_chance([layer.links for layer in layers])
                       for layers in built])
    random = np.mean([_overlap_over_chance([layer.links for layer in layers])
                      for layers in sampled])
    # Measured: 0.97 against 1.00 (8 seeds, q=5, M = Nr).
    assert overlap < random


def _distinct_paths(nr: int, edges: np.ndarray, masks: list[np.ndarray]) -> np.ndarray:
    """Per (destination, source): how many different switch sequences the layers route over."""
    destination = np.repeat(np.arange(nr), nr)
    tables = []
    for mask in masks:
        kept = edges[mask]
        tables.append(_native.layer_forwarding(
            nr, np.ascontiguousarray(kept[:, 0]), np.ascontiguousarray(kept[:, 1]), 7))
    assert all((dist < 255).all() for dist, _ in tables)
    # Walk every route for the longest layer distance; arrived routes stay at the destination.
    longest = max(int(dist.max()) for dist, _ in tables)
    signatures = []
    for _, next_hop in tables:
        node = np.tile(np.arange(nr), nr)
        hops = [node]
        for _ in range(longest):
            step = next_hop[destination, node]
            node = np.where(step >= 0, step, node)
            hops.append(node)
        signatures.append(np.stack(hops, axis=1))
    per_layer = np.stack(signatures)             # layer, pair, hop
    distinct = np.ones(nr * nr, dtype=np.int64)
    for layer in range(1, len(masks)):
        earlier = per_layer[:layer]
        new = ~(earlier == per_layer[layer][None]).all(axis=2).any(axis=0)
        distinct += new
    return distinct.reshape(nr, nr)


def test_nine_overlap_layers_give_most_pairs_three_distinct_paths(
        slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    layers = build_layers(nr, edges, _spec("overlap"), 1)
    distinct = _distinct_paths(nr, edges, [layer.links for layer in layers])
    pairs = ~np.eye(nr, dtype=bool)
    # Measured 4.4-4.6 distinct paths on average and 96.5-98% of pairs with >= 3 (seeds 1-3,
    # 1 full + 8 sparse layers, q=5); adjacent pairs keep their direct link in most layers.
    assert distinct[pairs].mean() >= 4.0
    assert (distinct[pairs] >= 3).mean() >= 0.93


def _is_spanning_tree(nr: int, edges: np.ndarray, tree: np.ndarray) -> bool:
    mask = np.zeros(len(edges), dtype=bool)
    mask[tree] = True
    islands, _ = connected_components(_graph(nr, edges, mask), directed=False)
    return len(np.unique(tree)) == nr - 1 and islands == 1


def test_past_layers_are_unions_of_spanning_trees(slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    for random_root in (False, True):
        plan = plan_past_layers(nr, edges, SPARSE_LAYERS, np.random.default_rng(2),
                                _spec("past"), random_root=random_root)
        assert sum(len(trees) for trees in plan.trees) == nr
        for mask, trees in zip(plan.masks, plan.trees, strict=True):
            assert all(_is_spanning_tree(nr, edges, tree) for tree in trees)
            union = np.zeros(len(edges), dtype=bool)
            for tree in trees:
                union[tree] = True
            assert np.array_equal(union, mask)


def test_past_trees_are_shortest_path_trees_towards_their_destination(
        slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    plan = plan_past_layers(nr, edges, 2, np.random.default_rng(4), _spec("past"))
    fabric_hops = _hops(nr, edges, np.ones(len(edges), dtype=bool))
    for tree in itertools.chain.from_iterable(plan.trees):
        mask = np.zeros(len(edges), dtype=bool)
        mask[tree] = True
        tree_hops = _hops(nr, edges, mask)
        # The root is the switch whose tree distances all equal fabric distances.
        assert any(np.array_equal(tree_hops[root], fabric_hops[root]) for root in range(nr))


def test_spain_puts_every_destination_tree_inside_one_layer(
        slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    plan = plan_spain_layers(nr, edges, SPARSE_LAYERS, np.random.default_rng(6), _spec("spain"))
    packed = [tree for trees in plan.trees for tree in trees]
    assert len(packed) == 2 * nr
    assert max(len(trees) for trees in plan.trees) <= -(-len(packed) // SPARSE_LAYERS)
    for mask, trees in zip(plan.masks, plan.trees, strict=True):
        for tree in trees:
            assert _is_spanning_tree(nr, edges, tree)
            assert mask[tree].all()
        covered = np.zeros(len(edges), dtype=bool)
        for tree in trees:
            covered[tree] = True
        assert np.array_equal(covered, mask)


def test_kshortest_path_lengths_grow_with_the_layer(slimfly5: tuple[int, np.ndarray]) -> None:
    nr, edges = slimfly5
    plan = plan_kshortest_layers(nr, edges, SPARSE_LAYERS, np.random.default_rng(8),
                                 _spec("kshortest", paths_per_layer=40))
    assert len(plan.paths) == 40
    fabric_hops = _hops(nr, edges, np.ones(len(edges), dtype=bool))
    index = {(int(u), int(v)): i for i, (u, v) in enumerate(edges)}
    for (source, target), paths in plan.paths.items():
        lengths = [len(path) - 1 for path in paths]
        assert len(paths) == SPARSE_LAYERS
        assert lengths[0] == fabric_hops[source, target]
        assert lengths == sorted(lengths)
        assert len({tuple(path) for path in paths}) == SPARSE_LAYERS
        for mask, path in zip(plan.masks, paths, strict=True):
            assert all(mask[index[(min(a, b), max(a, b))]] for a, b in itertools.pairwise(path))


def test_every_registered_algorithm_is_in_the_schema_and_has_its_builder() -> None:
    import importlib

    from fatpaths_cfg.inventory.json_schema import inventory_json_schema
    from fatpaths_cfg.layers.registry import LAYER_ALGORITHMS

    routing = inventory_json_schema()["$defs"]["RoutingSpec"]["properties"]["algorithm"]
    assert routing["enum"] == list(LAYER_ALGORITHMS)
    for entry in LAYER_ALGORITHMS.values():
        assert callable(getattr(importlib.import_module(entry.module), entry.builder)), entry
