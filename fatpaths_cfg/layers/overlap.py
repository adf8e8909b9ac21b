"""Minimise path overlap (FatPaths Listing 2): layers grown from almost-minimal paths.

The search runs natively (`fatpaths_cfg._native.overlap_layers`): on Slim Fly q=19 it serves
about a quarter of a million switch pairs per layer, far beyond a Python loop's budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.inventory.schema import RoutingSpec

# Paths per layer when routing.paths_per_layer is unset. Each path adds at most Lmax links, so
# 4 * Nr paths bound a layer near 12 links per switch on diameter-2 fabrics: sparse enough to
# force non-minimal detours, dense enough that most pairs get a chosen path in some layer.
DEFAULT_PATHS_PER_SWITCH = 4


@dataclass(frozen=True)
class OverlapPlan:
    """Layers as built, with the permutations and chosen paths kept for inspection and tests."""

    masks: list[np.ndarray]  # bool over links, one per sparse layer, not yet completed
    permutations: np.ndarray  # int32 [layer, position] -> switch
    paths: list[list[np.ndarray]]  # per layer, the switches of each chosen path in pi order


def default_paths_per_layer(nr: int) -> int:
    return max(1, DEFAULT_PATHS_PER_SWITCH * nr)


def plan_overlap_layers(
    nr: int, edges: np.ndarray, count: int, rng: np.random.Generator, spec: RoutingSpec
) -> OverlapPlan:
    edges = np.asarray(edges, dtype=np.int32).reshape(-1, 2)
    permutations = (
        np.stack([rng.permutation(nr).astype(np.int32) for _ in range(count)])
        if count
        else np.zeros((0, nr), dtype=np.int32)
    )
    budget = spec.paths_per_layer or default_paths_per_layer(nr)
    seed = int(rng.integers(2**63))
    masks, path_layer, offsets, nodes = _native.overlap_layers(
        nr,
        np.ascontiguousarray(edges[:, 0]),
        np.ascontiguousarray(edges[:, 1]),
        permutations,
        budget,
        seed,
    )
    paths: list[list[np.ndarray]] = [[] for _ in range(count)]
    for index, layer in enumerate(path_layer):
        paths[int(layer)].append(nodes[offsets[index] : offsets[index + 1]])
    return OverlapPlan([np.asarray(mask, dtype=bool) for mask in masks], permutations, paths)


def overlap_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    link_keys: np.ndarray,
) -> list[np.ndarray]:
    return plan_overlap_layers(nr, edges, count, rng, spec).masks
