"""Maximum achievable throughput (MAT): the largest T such that every host can send T times its
NIC rate under a traffic pattern, with flow confined to each scheme's paths.

For layered routing, flow is restricted to each layer's forwarding function (a demand may split
across layers, but inside a layer it follows that layer's next hops), exactly the constraint a
FatPaths fabric imposes. Solved as a linear program with HiGHS.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from fatpaths_cfg.analysis.highs import column_lp, new_solver
from fatpaths_cfg.compiled.paths import Path, layer_paths, walk
from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.support.scheme_names import SINGLE_PATH, current_name

SCHEMES = ("fatpaths", SINGLE_PATH, "ecmp")


@dataclass(frozen=True)
class ThroughputResult:
    scheme: str
    throughput: float  # T: share of each host's NIC rate every host can sustain
    commodities: int
    paths: int
    max_link_utilisation: float


def _shortest_paths(
    dist: np.ndarray, neighbours: list[np.ndarray], s: int, t: int, limit: int
) -> list[Path]:
    """Up to `limit` shortest s-t paths (ECMP's candidate set), in a fixed order."""
    paths: list[Path] = []

    def extend(path: list[int]) -> None:
        if len(paths) >= limit:
            return
        node = path[-1]
        if node == t:
            paths.append(tuple(path))
            return
        for nb in neighbours[node]:
            if dist[nb, t] == dist[node, t] - 1:
                path.append(int(nb))
                extend(path)
                path.pop()

    extend([s])
    return paths


def candidate_paths(
    scheme: str,
    fabric: Fabric,
    next_hop: np.ndarray,
    dist: np.ndarray,
    s: int,
    t: int,
    ecmp_limit: int = 16,
) -> list[Path]:
    if scheme == "fatpaths":
        return layer_paths(next_hop, s, t)
    if scheme == SINGLE_PATH:
        path = walk(next_hop[0], s, t)
        return [path] if path is not None else []
    if scheme == "ecmp":
        neighbours = [
            fabric.adjacency.indices[fabric.adjacency.indptr[v] : fabric.adjacency.indptr[v + 1]]
            for v in range(fabric.nr)
        ]
        return _shortest_paths(dist[0], neighbours, s, t, ecmp_limit)
    raise ValueError(f"unknown scheme {scheme!r} (one of {', '.join(SCHEMES)})")


def max_achievable_throughput(
    fabric: Fabric,
    next_hop: np.ndarray,
    dist: np.ndarray,
    demand: dict[tuple[int, int], float],
    scheme: str,
    host_rate_gbps: float | None = None,
) -> ThroughputResult:
    """Solve max T s.t. sum over a commodity's paths = T * demand, link loads <= capacity."""
    scheme = current_name(scheme)  # the old name of single-path, from the Python API
    rate = host_rate_gbps or (fabric.hosts[0].speed_gbps if fabric.hosts else 1.0)
    directed: dict[tuple[int, int], int] = {}
    capacity: list[float] = []
    for link in fabric.links:
        for u, v in ((link.a, link.b), (link.b, link.a)):
            directed[(u, v)] = len(capacity)
            capacity.append(link.speed_gbps / rate)
    commodities = sorted(demand)
    rows: list[int] = []
    cols: list[int] = []
    paths_total = 0
    # Column 0 is T; one column per (commodity, path).
    for k, (s, t) in enumerate(commodities):
        for path in candidate_paths(scheme, fabric, next_hop, dist, s, t):
            column = 1 + paths_total
            paths_total += 1
            rows.append(k)  # conservation row of commodity k
            cols.append(column)
            for u, v in itertools.pairwise(path):
                rows.append(len(commodities) + directed[(u, v)])
                cols.append(column)
    n_cols = 1 + paths_total
    n_rows = len(commodities) + len(capacity)
    values = np.ones(len(rows))
    rows_arr = np.array(rows + list(range(len(commodities))), dtype=np.int64)
    cols_arr = np.array(cols + [0] * len(commodities), dtype=np.int64)
    vals_arr = np.concatenate([values, -np.array([demand[c] for c in commodities])])
    matrix = sp.csc_matrix((vals_arr, (rows_arr, cols_arr)), shape=(n_rows, n_cols))

    lp = column_lp(
        matrix,
        np.concatenate([[1.0], np.zeros(paths_total)]),
        (np.zeros(n_cols), np.concatenate([[1.0], np.full(paths_total, np.inf)])),
        (
            np.concatenate([np.zeros(len(commodities)), np.full(len(capacity), -np.inf)]),
            np.concatenate([np.zeros(len(commodities)), np.array(capacity)]),
        ),
    )
    solver = new_solver()
    solver.passModel(lp)
    solver.run()
    solution = solver.getSolution()
    throughput = float(solution.col_value[0]) if n_cols else 0.0
    loads = np.array(solution.row_value[len(commodities) :]) if capacity else np.zeros(0)
    utilisation = float((loads / np.array(capacity)).max()) if len(capacity) else 0.0
    return ThroughputResult(scheme, throughput, len(commodities), paths_total, utilisation)
