"""Path diversity: how many edge-disjoint paths the fabric and the layers offer a switch pair.

cmin(s, t) is the number of edge-disjoint shortest paths (a unit-capacity max flow over the
shortest-path DAG). For the layers, the question is how many of the per-layer paths are
pairwise edge-disjoint, i.e. how many independent routes a host can spread a flow over.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

from fatpaths_cfg.analysis.path_sampling import greedy_disjoint
from fatpaths_cfg.compiled.paths import walk_layers
from fatpaths_cfg.fabric import Fabric


@dataclass(frozen=True)
class PairDiversity:
    source: int
    destination: int
    minimal_length: int
    disjoint_shortest_paths: int  # cmin
    distinct_layer_paths: int
    disjoint_layer_paths: int
    layer_path_lengths: tuple[int, ...]  # per layer; -1 where the layer has no path


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


def pair_diversity(
    fabric: Fabric, next_hop: np.ndarray, dist: np.ndarray, pairs: np.ndarray
) -> list[PairDiversity]:
    """Diversity of the given (s, t) switch pairs; `dist` is the minimal (layer 1) distance."""
    result = []
    for s, t in pairs.tolist():
        walked = walk_layers(next_hop, s, t)
        paths = [p for p in walked if p is not None]
        result.append(
            PairDiversity(
                s,
                t,
                int(dist[s, t]),
                disjoint_shortest_paths(fabric, dist, s, t),
                len(set(paths)),
                greedy_disjoint(paths),
                tuple(len(p) - 1 if p is not None else -1 for p in walked),
            )
        )
    return result
