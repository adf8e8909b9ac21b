"""Layers: subsets of the fabric's links inside which traffic follows shortest paths.

Layer 1 always holds every link (minimal routing). Layers 2..n come from one of the
algorithms below; each must connect every switch pair, so a layer that does not is completed
with the fewest extra links, chosen by a hash of their names (never redrawn whole: a redraw
would move every link of the layer when one cable changes).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.inventory.layer_algorithms import LAYER_ALGORITHMS
from fatpaths_cfg.support.stable_hash import mix64, salt, unit_draws
from fatpaths_cfg.topologies.base import is_connected as graph_is_connected

if TYPE_CHECKING:
    # Only for annotations: the schema imports the algorithm registry from this package.
    from fatpaths_cfg.inventory.schema import RoutingSpec

# Every algorithm returns one link mask per sparse layer (layers 2..n), possibly disconnected.
# The Generator is named as a string: reaching `np.random` imports it (7 ms), and the schema,
# which imports this package, has no use for it.
# The last argument is each link's key (a hash of the cable's name), for algorithms that
# choose link by link.
SparseLayerBuilder = Callable[
    [int, np.ndarray, int, "np.random.Generator", "RoutingSpec", np.ndarray], list[np.ndarray]
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
    nr: int, edges: np.ndarray, mask: np.ndarray, priority: np.ndarray
) -> tuple[np.ndarray, int]:
    """Add links of the fabric, lowest `priority` first, that join components until one remains.

    Kruskal-style with a union-find: each added link merges two islands, so at most
    (islands - 1) links are added and the layer stays as sparse as possible. The priority is a
    hash of each cable's name (`layer_draws`), so a layer is completed by the same cables
    whatever else changes in the fabric: completion is local.
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
    outside = np.flatnonzero(~mask)
    for i in outside[np.argsort(priority[outside], kind="stable")]:
        u, v = edges[i]
        ru, rv = find(int(u)), find(int(v))
        if ru != rv:
            parent[ru] = rv
            completed[i] = True
            added += 1
    return completed, added


def seeded_keys(keys: np.ndarray, seed: int) -> np.ndarray:
    """Name keys mixed with the compile's seed, so that each seed draws other layers."""
    return mix64(keys ^ np.uint64(salt("seed", seed)))


def layer_draws(link_keys: np.ndarray, number: int) -> np.ndarray:
    """Per link, a uniform draw in [0, 1) from (seed, layer, the cable's name), `link_keys`
    being seeded (`seeded_keys`): a random layer keeps the links drawn below rho, and
    completion adds the lowest of the others first."""
    return unit_draws(link_keys, salt("layer", number))


def up_down_order(
    nr: int, edges: np.ndarray, switch_keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One up*/down* order for the whole fabric and the BFS tree that backs it.

    The rank is the BFS level from a root drawn by name (`switch_keys` are seeded name keys),
    ties broken by the same draws;
    the tree holds each switch's link to its BFS parent. Every layer that contains the tree
    gives every switch but the root a neighbour ranked above it, which is what lets up*/down*
    routing reach every pair. Sharing one order across layers keeps even their union free of
    down->up turns, so all layers fit in one lossless (PFC) class.
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
    draws = unit_draws(switch_keys, salt("up-down"))
    root = int(np.argmin(draws))
    order, predecessors = breadth_first_order(graph, root, directed=False, return_predecessors=True)
    level = np.zeros(nr, dtype=np.int64)
    for node in order[1:]:
        level[node] = level[predecessors[node]] + 1
    ranked = np.lexsort((draws, level))
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


def index_keys(count: int) -> np.ndarray:
    """Keys for things that have no names (a bare edge list in a test or a study): their
    positions, hashed."""
    return mix64(np.arange(count, dtype=np.uint64))


def layer_rng(seed: int) -> np.random.Generator:
    """The stream the global layer algorithms (overlap, SPAIN, PAST, k-shortest) draw from;
    one place, so that a study calling an algorithm's `plan_*` directly sees the compiler's
    draws."""
    return np.random.default_rng([seed, 0x1A7E])


def build_layers(
    nr: int,
    edges: np.ndarray,
    spec: RoutingSpec,
    seed: int,
    link_keys: np.ndarray | None = None,
    switch_keys: np.ndarray | None = None,
    keep: list[np.ndarray] | None = None,
) -> list[Layer]:
    """Layer 1 (all links) plus `spec.layers - 1` sparse layers, each connecting every pair.

    `link_keys` and `switch_keys` (hashes of the cables' and switches' names) make every choice
    follow names, not positions. `keep` gives the sparse layers' links of an earlier compile
    (`compile --keep-layers`): they are kept as they are, and only repaired where they no
    longer connect.
    """
    link_keys = seeded_keys(index_keys(len(edges)) if link_keys is None else link_keys, seed)
    switch_keys = seeded_keys(index_keys(nr) if switch_keys is None else switch_keys, seed)
    rng = layer_rng(seed)
    full = np.ones(len(edges), dtype=bool)
    layers = [Layer(1, full, "full", None)]
    if spec.layers > 1:
        if keep is not None:
            masks = keep
        else:
            masks = _builder(spec.algorithm)(nr, edges, spec.layers - 1, rng, spec, link_keys)
        for number, mask in enumerate(masks, 2):
            completed, added = (mask, 0)
            if not is_connected(nr, edges, mask):
                priority = layer_draws(link_keys, number)
                completed, added = complete_layer(nr, edges, mask, priority)
            layers.append(Layer(number, completed, spec.algorithm, None, 1, added))
    if spec.acyclic:
        rank, tree = up_down_order(nr, edges, switch_keys)
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


def layers_or_user_error(
    nr: int,
    edges: np.ndarray,
    spec: RoutingSpec,
    seed: int,
    file: str,
    line: int,
    link_keys: np.ndarray | None = None,
    switch_keys: np.ndarray | None = None,
    keep: list[np.ndarray] | None = None,
) -> list[Layer]:
    try:
        return build_layers(nr, edges, spec, seed, link_keys, switch_keys, keep)
    except LayerError as exc:
        raise UserErrors.single(file, "routing", exc.message, exc.hint, line=line) from None
