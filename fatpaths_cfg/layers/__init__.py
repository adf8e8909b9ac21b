"""Layers: subsets of the fabric's links inside which traffic follows shortest paths.

Layer 1 always holds every link (minimal routing). Layers 2..n come from one of the
algorithms below; each must connect every switch pair, so a sampler resamples (bounded, seeded)
and the structured algorithms complete their layer with extra links.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.layers.registry import LAYER_ALGORITHMS
from fatpaths_cfg.topologies.base import is_connected as graph_is_connected

if TYPE_CHECKING:
    # Only for annotations: the schema imports the algorithm registry from this package.
    from fatpaths_cfg.inventory.schema import RoutingSpec

# Every algorithm returns one link mask per sparse layer (layers 2..n), possibly disconnected.
# The Generator is named as a string: reaching `np.random` imports it (7 ms), and the schema,
# which imports this package, has no use for it.
SparseLayerBuilder = Callable[
    [int, np.ndarray, int, "np.random.Generator", "RoutingSpec"], list[np.ndarray]
]


@dataclass(frozen=True)
class Layer:
    number: int  # 1-based, as operators count layers
    links: np.ndarray  # bool mask over Fabric.links
    algorithm: str  # "full" for layer 1, else the algorithm that built it
    rank: np.ndarray | None  # up*/down* order (int32 per switch) in acyclic mode
    attempts: int = 1  # samples drawn before the layer connected every pair
    completed_links: int = 0  # links added by completion to connect the layer

    @property
    def link_count(self) -> int:
        return int(self.links.sum())


class LayerError(Exception):
    """A layer that cannot connect every switch pair; becomes a user error upstream."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def is_connected(nr: int, edges: np.ndarray, mask: np.ndarray) -> bool:
    """Whether the links `mask` keeps connect every switch."""
    return graph_is_connected(nr, edges[mask])


def complete_layer(
    nr: int, edges: np.ndarray, mask: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Add links of the fabric (in seeded random order) that join components until one remains.

    Kruskal-style with a union-find: each added link merges two islands, so at most
    (islands - 1) links are added and the layer stays as sparse as possible.
    """
    completed = mask.copy()
    parent = np.arange(nr)

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for u, v in edges[mask]:
        ru, rv = find(int(u)), find(int(v))
        if ru != rv:
            parent[ru] = rv
    added = 0
    for i in rng.permutation(np.flatnonzero(~mask)):
        u, v = edges[i]
        ru, rv = find(int(u)), find(int(v))
        if ru != rv:
            parent[ru] = rv
            completed[i] = True
            added += 1
    return completed, added


def up_down_order(
    nr: int, edges: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One up*/down* order for the whole fabric and the BFS tree that backs it.

    The rank is the BFS level from a random root, ties broken at random; the tree holds each
    switch's link to its BFS parent. Every layer that contains the tree gives every switch but
    the root a neighbour ranked above it, which is what lets up*/down* routing reach every
    pair. Sharing one order across layers keeps even their union free of down->up turns, so
    all layers fit in one lossless (PFC) class.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    graph = sp.csr_matrix(
        (
            np.ones(2 * len(edges), dtype=np.int8),
            (
                np.concatenate([edges[:, 0], edges[:, 1]]),
                np.concatenate([edges[:, 1], edges[:, 0]]),
            ),
        ),
        shape=(nr, nr),
    )
    root = int(rng.integers(nr))
    order, predecessors = breadth_first_order(graph, root, directed=False, return_predecessors=True)
    level = np.zeros(nr, dtype=np.int64)
    for node in order[1:]:
        level[node] = level[predecessors[node]] + 1
    ranked = np.lexsort((rng.permutation(nr), level))
    rank = np.empty(nr, dtype=np.int32)
    rank[ranked] = np.arange(nr, dtype=np.int32)
    link_of = {(int(u), int(v)): i for i, (u, v) in enumerate(edges.tolist())}
    tree = np.zeros(len(edges), dtype=bool)
    for node in order[1:]:
        parent = int(predecessors[node])
        tree[link_of[(min(node, parent), max(node, parent))]] = True
    return rank, tree


def _builder(algorithm: str) -> SparseLayerBuilder:
    entry = LAYER_ALGORITHMS[algorithm]
    builder: SparseLayerBuilder = getattr(importlib.import_module(entry.module), entry.builder)
    return builder


def build_layers(nr: int, edges: np.ndarray, spec: RoutingSpec, seed: int) -> list[Layer]:
    """Layer 1 (all links) plus `spec.layers - 1` sparse layers, each connecting every pair."""
    rng = np.random.default_rng([seed, 0x1A7E])
    full = np.ones(len(edges), dtype=bool)
    layers = [Layer(1, full, "full", None)]
    if spec.layers > 1:
        masks = _builder(spec.algorithm)(nr, edges, spec.layers - 1, rng, spec)
        for number, (mask, attempts) in enumerate(_connected(nr, edges, masks, spec, rng), 2):
            completed, added = (mask, 0)
            if not is_connected(nr, edges, mask):
                completed, added = complete_layer(nr, edges, mask, rng)
            layers.append(Layer(number, completed, spec.algorithm, None, attempts, added))
    if spec.acyclic:
        rank, tree = up_down_order(nr, edges, rng)
        layers = [
            Layer(
                layer.number,
                layer.links | tree,
                layer.algorithm,
                rank,
                layer.attempts,
                layer.completed_links + int((tree & ~layer.links).sum()),
            )
            for layer in layers
        ]
    return layers


def _connected(
    nr: int, edges: np.ndarray, masks: list[np.ndarray], spec: RoutingSpec, rng: np.random.Generator
) -> list[tuple[np.ndarray, int]]:
    """Layers of a resampling algorithm are drawn again until connected; the others are
    completed by the caller."""
    if LAYER_ALGORITHMS[spec.algorithm].connects_by != "resampling":
        return [(mask, 1) for mask in masks]
    from fatpaths_cfg.layers.random import resample_until_connected

    return [
        resample_until_connected(nr, edges, mask, number, spec, rng)
        for number, mask in enumerate(masks, 2)
    ]


def layers_or_user_error(
    nr: int, edges: np.ndarray, spec: RoutingSpec, seed: int, file: str, line: int
) -> list[Layer]:
    try:
        return build_layers(nr, edges, spec, seed)
    except LayerError as exc:
        raise UserErrors.single(file, "routing", exc.message, exc.hint, line=line) from None
