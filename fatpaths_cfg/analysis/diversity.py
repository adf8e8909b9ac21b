"""Path diversity: how many edge-disjoint paths the fabric and the layers offer a switch pair.

cmin(s, t) is the number of edge-disjoint shortest paths (a unit-capacity max flow over the
shortest-path DAG). For the layers, the question is how many of the per-layer paths are
pairwise edge-disjoint, i.e. how many independent routes a host can spread a flow over.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

from fatpaths_cfg.fabric import Fabric


@dataclass(frozen=True)
class PairDiversity:
    source: int
    destination: int
    minimal_length: int
    disjoint_shortest_paths: int  # cmin
    distinct_layer_paths: int
    disjoint_layer_paths: int
    layer_path_lengths: tuple[int, ...]


def disjoint_shortest_paths(fabric: Fabric, dist: np.ndarray, s: int, t: int) -> int:
    """cmin(s, t): unit-capacity max flow over the arcs that lie on some shortest s-t path."""
    e = fabric.edges
    tails = np.concatenate([e[:, 0], e[:, 1]])
    heads = np.concatenate([e[:, 1], e[:, 0]])
    on_shortest = dist[s, tails].astype(np.int32) + 1 + dist[heads, t] == dist[s, t]
    graph = sp.csr_matrix(
        (np.ones(int(on_shortest.sum()), dtype=np.int32), (tails[on_shortest], heads[on_shortest])),
        shape=(fabric.nr, fabric.nr),
    )
    return int(maximum_flow(graph, s, t).flow_value)


def _layer_paths(next_hop: np.ndarray, s: int, t: int) -> list[tuple[int, ...]]:
    paths = []
    for layer in range(next_hop.shape[0]):
        path = [s]
        while path[-1] != t and len(path) <= next_hop.shape[1]:
            path.append(int(next_hop[layer, path[-1], t]))
        paths.append(tuple(path))
    return paths


def _greedy_disjoint(paths: list[tuple[int, ...]]) -> int:
    """Pairwise edge-disjoint paths picked shortest first (a lower bound on the best set)."""
    used: set[tuple[int, int]] = set()
    chosen = 0
    for path in sorted(set(paths), key=len):
        arcs = {(min(u, v), max(u, v)) for u, v in itertools.pairwise(path)}
        if not arcs & used:
            used |= arcs
            chosen += 1
    return chosen


def pair_diversity(
    fabric: Fabric, next_hop: np.ndarray, dist: np.ndarray, pairs: np.ndarray
) -> list[PairDiversity]:
    """Diversity of the given (s, t) switch pairs; `dist` is the minimal (layer 1) distance."""
    result = []
    for s, t in pairs.tolist():
        paths = _layer_paths(next_hop, s, t)
        result.append(
            PairDiversity(
                s,
                t,
                int(dist[s, t]),
                disjoint_shortest_paths(fabric, dist, s, t),
                len(set(paths)),
                _greedy_disjoint(paths),
                tuple(len(p) - 1 for p in paths),
            )
        )
    return result


def sample_pairs(nr: int, count: int, rng: np.random.Generator) -> np.ndarray:
    if nr * (nr - 1) <= count:
        s, t = np.nonzero(~np.eye(nr, dtype=bool))
        return np.stack([s, t], axis=1)
    s = rng.integers(nr, size=count)
    t = (s + rng.integers(1, nr, size=count)) % nr
    return np.stack([s, t], axis=1)
