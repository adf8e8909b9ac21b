"""Maximum achievable throughput (MAT) of parallel dataplanes, as in P-Net (CoNEXT'22, 5.1.1).

MAT is the largest per-host rate T (Gb/s) that every host can send under a traffic pattern, with
flow confined to a routing scheme's paths:

- `mcf`: no path constraint, flow may take any route in any plane (multicommodity flow);
- `ecmp`: each host pair is hashed onto one plane and uses that plane's shortest paths;
- `ksp`: the K shortest paths of every plane (K per plane);
- `ksp-total`: the K shortest paths over all planes together, the paper's K (MPTCP subflows);
- `fatpaths`: the paths of each plane's FatPaths layers.

Host pairs are aggregated into rack-to-rack commodities, which is exact here: hosts of one rack
share every switch, and their uplinks enter the LP as per-(rack, plane) rows, plus a
per-(commodity, plane) bound when every host sends to and receives from at most one host
(permutation), so no host puts more than its uplink's rate into a plane. For all-to-all the
rack rows are exact because the hosts of a rack are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from fatpaths_cfg.analysis.highs import column_lp, new_solver
from fatpaths_cfg.analysis.plane_set import (
    PlaneSet,
    neighbours,
    nested_shortest_paths,
    shortest_paths,
)
from fatpaths_cfg.compiled.paths import Path, layer_paths
from fatpaths_cfg.traffic_patterns import derangement

PLANE_SCHEMES = ("mcf", "ecmp", "ksp", "ksp-total", "fatpaths")
ECMP_PATH_LIMIT = 64
_HASH_SALT = 0x9E3779B97F4A7C15
# Larger LPs go to the interior-point solver, which is much faster on them than simplex.
_IPM_COLUMNS = 1_000
# Relative duality gap at which the interior-point solver stops, outside column generation.
# HiGHS's 1e-8 default spent half the time of the larger LPs on digits MAT is not reported
# to (heterogeneous all-to-all edge MCF: 140 -> 104 CPU-s, T within 1e-6).
IPM_GAP = 1e-6
# Column generation stops once T is provably within this share of the optimum.
MCF_GAP = 1e-4
# It starts from each plane's K shortest paths: with one, it took many rounds, each an LP
# solved from scratch (heterogeneous 686-host permutation: 83 CPU-s from 1, 62 from 4, 46
# from 8).
MCF_START_PATHS = 8
_FEASIBLE = 2  # HiGHS kSolutionStatusFeasible
# A generated column must raise T by more than this per unit of flow to be worth another round.
_REDUCED_COST_TOLERANCE = 1e-7


@dataclass(frozen=True)
class PlaneTraffic:
    """Rack-level commodities of a host traffic pattern, in units of one host's injection."""

    src: np.ndarray  # rack
    dst: np.ndarray  # rack
    demand: np.ndarray  # sum over host pairs of 1 / (flows of the source host)
    pairs: np.ndarray  # host pairs in the commodity
    plane: np.ndarray  # plane the commodity is pinned to, -1 = any
    one_to_one: bool  # every host sends to at most one host and receives from at most one


@dataclass(frozen=True)
class PlaneThroughput:
    scheme: str
    k: int | None
    throughput_gbps: float  # T: the rate every host sustains
    commodities: int
    paths: int
    seconds_build: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


def host_pattern(planes: PlaneSet, pattern: str, seed: int) -> np.ndarray:
    """(F, 2) host pairs: `all-to-all` (every ordered pair) or a seeded random `permutation`
    (a derangement: no host sends to itself)."""
    n = planes.hosts
    if pattern == "all-to-all":
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        return np.stack([src, dst], axis=1).astype(np.int64)
    if pattern == "permutation":
        dst = derangement(n, np.random.default_rng([seed, 0x9E7]))
        return np.stack([np.arange(n), dst], axis=1).astype(np.int64)
    raise ValueError(f"unknown pattern {pattern!r} (all-to-all or permutation)")


def _hashed_plane(pairs: np.ndarray, planes: int, seed: int) -> np.ndarray:
    """ECMP's plane choice: a seeded hash of (source host, destination host), like a NIC
    hashing the 5-tuple; splitmix64 so neighbouring hosts spread evenly."""
    with np.errstate(over="ignore"):
        x = (pairs[:, 0].astype(np.uint64) << np.uint64(32)) ^ pairs[:, 1].astype(np.uint64)
        x = x + np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * np.uint64(_HASH_SALT)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x % np.uint64(planes)).astype(np.int64)


def plane_traffic(
    planes: PlaneSet, pairs: np.ndarray, pin_planes: bool = False, seed: int = 0
) -> PlaneTraffic:
    flows = np.bincount(pairs[:, 0], minlength=planes.hosts)
    weight = 1.0 / flows[pairs[:, 0]]
    s = planes.host_rack[pairs[:, 0]]
    t = planes.host_rack[pairs[:, 1]]
    plane = _hashed_plane(pairs, planes.planes, seed) if pin_planes else np.full(len(pairs), -1)
    key = (s * planes.racks + t) * (planes.planes + 1) + (plane + 1)
    unique, inverse = np.unique(key, return_inverse=True)
    demand = np.bincount(inverse, weights=weight, minlength=len(unique))
    count = np.bincount(inverse, minlength=len(unique))
    rack_pair, pinned = np.divmod(unique, planes.planes + 1)
    receives = np.bincount(pairs[:, 1], minlength=planes.hosts)
    return PlaneTraffic(
        src=rack_pair // planes.racks,
        dst=rack_pair % planes.racks,
        demand=demand,
        pairs=count,
        plane=pinned - 1,
        one_to_one=bool(flows.max(initial=0) <= 1 and receives.max(initial=0) <= 1),
    )


class PathCatalogue:
    """Candidate paths per (plane, source rack, destination rack), computed once and cut to
    each K, so a sweep over K enumerates every plane only once: `ksp_depth` is the largest K
    the sweep will ask for."""

    def __init__(self, planes: PlaneSet, seed: int, ksp_depth: int = 0) -> None:
        self.planes = planes
        self.seed = seed
        self.ksp_depth = ksp_depth
        # Planes wired alike rank their paths alike, as copies of one plane running one
        # routing config would: each plane is looked up as the first plane with its wiring.
        self._twin = [
            next(q for q in range(p + 1) if np.array_equal(planes.edges[q], edges))
            for p, edges in enumerate(planes.edges)
        ]
        self._around = [neighbours(planes.switches, e) for e in planes.edges]
        self._dist = [planes.hops(p) for p in range(planes.planes)]
        # (plane, s, t) -> (paths, K they were asked for, whether every smaller K is a prefix)
        self._ksp: dict[tuple[int, int, int], tuple[list[Path], int, bool]] = {}
        self._layer_next_hop: list[np.ndarray] | None = None
        self._single: PathCatalogue | None = None

    def single_plane(self) -> PathCatalogue | None:
        """A catalogue of the first plane alone when every plane is a copy of it (wiring,
        link and uplink rates), else None; it shares this one's paths of that plane."""
        one = _one_plane(self.planes)
        if one is None:
            return None
        if self._single is None:
            self._single = PathCatalogue(
                one, self.seed, max(1, self.ksp_depth // self.planes.planes)
            )
            self._single._ksp = self._ksp
        return self._single

    def hops(self, plane: int) -> np.ndarray:
        return self._dist[plane]

    def distances(self) -> list[np.ndarray]:
        return self._dist

    def _ranked(self, plane: int, s: int, t: int, k: int) -> tuple[list[Path], bool]:
        # Ties are ranked by a stream of their own, so a path's rank does not depend on which
        # other pairs were asked for before.
        rng = np.random.default_rng([self.seed, plane, s, t, 0x6B5])
        dist = self._dist[plane]
        return nested_shortest_paths(self._around[plane], dist[:, t], s, t, k, rng)

    def prepare_ksp(self, pairs: list[tuple[int, int]], k: int) -> None:
        depth = max(k, self.ksp_depth)
        for plane in sorted(set(self._twin)):
            for s, t in pairs:
                known = self._ksp.get((plane, s, t))
                if s != t and (known is None or known[1] < k):
                    found, nested = self._ranked(plane, s, t, depth)
                    self._ksp[(plane, s, t)] = (found, depth, nested)

    def ksp(self, plane: int, s: int, t: int, k: int) -> list[Path]:
        if s == t:
            return [(s,)]
        plane = self._twin[plane]
        found, depth, nested = self._ksp[(plane, s, t)]
        if k < depth and not nested:
            return self._ranked(plane, s, t, k)[0]
        return found[:k]

    def ksp_total(self, s: int, t: int, k: int) -> list[tuple[int, Path]]:
        """The k shortest over all planes: by length, then by rank inside the plane, then by
        plane, so equal planes take turns (k = planes gives each plane its shortest path)."""
        ranked = [
            (len(path), rank, plane, path)
            for plane in range(self.planes.planes)
            for rank, path in enumerate(self.ksp(plane, s, t, k))
        ]
        ranked.sort(key=lambda item: item[:3])
        return [(plane, path) for _, _, plane, path in ranked[:k]]

    def ecmp(self, plane: int, s: int, t: int) -> list[Path]:
        if s == t:
            return [(s,)]
        return shortest_paths(self._around[plane], self._dist[plane][:, t], s, t, ECMP_PATH_LIMIT)

    def set_layers(self, next_hop: list[np.ndarray]) -> None:
        self._layer_next_hop = next_hop

    def layers(self, plane: int, s: int, t: int) -> list[Path]:
        if self._layer_next_hop is None:
            raise ValueError("the fatpaths scheme needs layers: call set_layers first")
        if s == t:
            return [(s,)]
        return layer_paths(self._layer_next_hop[plane], s, t)


def fatpaths_next_hops(planes: PlaneSet, layers: int, rho: float, seed: int) -> list[np.ndarray]:
    """FatPaths layers of every plane (random algorithm, the compiler's default), as next-hop
    tables [layer, switch, destination]."""
    from fatpaths_cfg.inventory.schema import RoutingSpec
    from fatpaths_cfg.layers import build_layers
    from fatpaths_cfg.routing import compute_routing

    spec = RoutingSpec(layers=layers, rho=rho, seed=seed)
    tables = []
    for plane, edges in enumerate(planes.edges):
        built = build_layers(planes.switches, edges, spec, seed + plane)
        tables.append(compute_routing(planes.switches, edges, built, seed + plane).next_hop)
    return tables


def _candidates(
    catalogue: PathCatalogue, traffic: PlaneTraffic, scheme: str, k: int
) -> list[list[tuple[int, Path]]]:
    planes = range(catalogue.planes.planes)
    pairs = sorted(set(zip(traffic.src.tolist(), traffic.dst.tolist(), strict=True)))
    if scheme in ("ksp", "ksp-total"):
        catalogue.prepare_ksp(pairs, k)
    out: list[list[tuple[int, Path]]] = []
    for s, t, pinned in zip(
        traffic.src.tolist(), traffic.dst.tolist(), traffic.plane.tolist(), strict=True
    ):
        allowed = planes if pinned < 0 else [pinned]
        if scheme == "ecmp":
            out.append([(p, path) for p in allowed for path in catalogue.ecmp(p, s, t)])
        elif scheme == "ksp":
            out.append([(p, path) for p in allowed for path in catalogue.ksp(p, s, t, k)])
        elif scheme == "ksp-total":
            out.append(catalogue.ksp_total(s, t, k) if s != t else [(p, (s,)) for p in allowed])
        elif scheme == "fatpaths":
            out.append([(p, path) for p in allowed for path in catalogue.layers(p, s, t)])
        else:
            raise ValueError(f"unknown scheme {scheme!r} (one of {', '.join(PLANE_SCHEMES)})")
    return out


def _link_lookup(planes: PlaneSet) -> tuple[list[np.ndarray], np.ndarray]:
    """Per plane a [u, v] -> directed link id table, and every link's capacity in Gb/s."""
    tables, capacity, offset = [], [], 0
    for plane, edges in enumerate(planes.edges):
        table = np.full((planes.switches, planes.switches), -1, dtype=np.int64)
        ids = np.arange(len(edges), dtype=np.int64)
        table[edges[:, 0], edges[:, 1]] = offset + 2 * ids
        table[edges[:, 1], edges[:, 0]] = offset + 2 * ids + 1
        tables.append(table)
        capacity.append(np.full(2 * len(edges), planes.link_gbps[plane]))
        offset += 2 * len(edges)
    return tables, np.concatenate(capacity) if capacity else np.zeros(0)


@dataclass
class _Rows:
    """Sparse (row, column, value) triplets plus row bounds, appended block by block."""

    rows: list[np.ndarray] = field(default_factory=list)
    cols: list[np.ndarray] = field(default_factory=list)
    vals: list[np.ndarray] = field(default_factory=list)
    lower: list[np.ndarray] = field(default_factory=list)
    upper: list[np.ndarray] = field(default_factory=list)
    count: int = 0

    def block(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
    ) -> None:
        self.rows.append(rows + self.count)
        self.cols.append(cols)
        self.vals.append(vals)
        self.lower.append(lower)
        self.upper.append(upper)
        self.count += len(lower)

    def matrix(self, n_cols: int) -> sp.csc_matrix:
        return sp.csc_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.count, n_cols),
        )


def path_throughput(
    planes: PlaneSet,
    traffic: PlaneTraffic,
    candidates: list[list[tuple[int, Path]]],
    unit_gbps: float,
    keep_duals: bool = False,
) -> tuple[float, int, np.ndarray]:
    """Solve the path LP: max T, each commodity's path flows sum to T * demand, every directed
    link, host uplink group and (one-to-one patterns) commodity plane within capacity.
    Returns (T in Gb/s, paths, row duals: usable for pricing only with `keep_duals`)."""
    tables, capacity = _link_lookup(planes)
    counts = np.array([len(c) for c in candidates], dtype=np.int64)
    n_paths = int(counts.sum())
    path_commodity = np.repeat(np.arange(len(candidates), dtype=np.int64), counts)
    path_plane = np.fromiter((p for c in candidates for p, _ in c), np.int64, n_paths)
    lengths = np.fromiter((len(path) for c in candidates for _, path in c), np.int64, n_paths)
    nodes = np.fromiter((v for c in candidates for _, path in c for v in path), np.int64)
    # Consecutive nodes of one path form its hops; the last node of a path pairs with nothing.
    path_of_node = np.repeat(np.arange(n_paths, dtype=np.int64), lengths)
    hop = path_of_node[:-1] == path_of_node[1:]
    hop_path = path_of_node[:-1][hop]
    stacked = np.stack(tables)
    hop_link = stacked[path_plane[hop_path], nodes[:-1][hop], nodes[1:][hop]]
    if np.any(hop_link < 0):
        raise ValueError("a candidate path uses a link its plane does not have")

    # Columns: one copy T_c of T per commodity, chained equal, then the paths. A single T
    # column would touch every demand row and make the interior-point factorisation dense.
    n_comm = len(candidates)
    n_cols = n_comm + n_paths
    col = n_comm + np.arange(n_paths, dtype=np.int64)
    n_planes = planes.planes
    uplink = np.array(planes.uplink_gbps) / unit_gbps
    per_rack = planes.hosts_per_rack()
    lp = _Rows()
    demand_rows = np.arange(len(candidates), dtype=np.int64)
    lp.block(
        np.concatenate([path_commodity, demand_rows]),
        np.concatenate([col, demand_rows]),
        np.concatenate([np.ones(n_paths), -traffic.demand]),
        np.zeros(len(candidates)),
        np.zeros(len(candidates)),
    )
    lp.block(
        hop_link,
        n_comm + hop_path,
        np.ones(len(hop_link)),
        np.full(len(capacity), -np.inf),
        capacity / unit_gbps,
    )
    for racks in (traffic.src, traffic.dst):
        group = racks[path_commodity] * n_planes + path_plane
        bound = (per_rack[:, None] * uplink[None, :]).ravel()
        lp.block(group, col, np.ones(n_paths), np.full(len(bound), -np.inf), bound)
    if traffic.one_to_one:
        group = path_commodity * n_planes + path_plane
        bound = (traffic.pairs[:, None] * uplink[None, :]).ravel()
        lp.block(group, col, np.ones(n_paths), np.full(len(bound), -np.inf), bound)
    _equal_chain(lp, n_comm)
    value, duals = _solve(lp, n_cols, np.inf, keep_duals)
    return value * unit_gbps, n_paths, duals


def mcf_edge_throughput(planes: PlaneSet, traffic: PlaneTraffic, unit_gbps: float) -> float:
    """Unconstrained multicommodity flow, one flow per (plane, source rack) on every directed
    link: aggregating by source is exact (a source's flows to all destinations can share one
    flow variable per link), and keeps the LP at planes x racks x links columns."""
    tables, capacity = _link_lookup(planes)
    racks, nodes, n_planes = planes.racks, planes.switches, planes.planes
    n_links = len(capacity)
    sources = np.unique(traffic.src)
    src_index = np.full(racks, -1, dtype=np.int64)
    src_index[sources] = np.arange(len(sources))
    # Directed links with their plane, tail and head, in link-id order.
    tail = np.empty(n_links, dtype=np.int64)
    head = np.empty(n_links, dtype=np.int64)
    link_plane = np.empty(n_links, dtype=np.int64)
    for plane, table in enumerate(tables):
        u, v = np.nonzero(table >= 0)
        ids = table[u, v]
        tail[ids], head[ids], link_plane[ids] = u, v, plane
    n_src = len(sources)
    # Columns: T | x[source, link] | y[commodity, plane] (delivery of a commodity on a plane).
    n_x = n_src * n_links
    n_comm = len(traffic.src)
    x_col = 1 + np.arange(n_x, dtype=np.int64).reshape(n_src, n_links)
    y_col = 1 + n_x + np.arange(n_comm * n_planes, dtype=np.int64).reshape(n_comm, n_planes)
    n_cols = 1 + n_x + n_comm * n_planes
    uplink = np.array(planes.uplink_gbps) / unit_gbps
    per_rack = planes.hosts_per_rack()
    lp = _Rows()
    # Conservation of source i's flow at node v in plane p: out - in - [v = s] * sent + got = 0.
    node_row = (np.arange(n_src)[:, None] * n_planes + link_plane[None, :]) * nodes
    out_rows = node_row + tail[None, :]
    in_rows = node_row + head[None, :]
    comm_src = src_index[traffic.src]
    plane_ids = np.arange(n_planes)
    y_node = (comm_src[:, None] * n_planes + plane_ids[None, :]) * nodes
    lp.block(
        np.concatenate(
            [
                out_rows.ravel(),
                in_rows.ravel(),
                (y_node + traffic.src[:, None]).ravel(),
                (y_node + traffic.dst[:, None]).ravel(),
            ]
        ),
        np.concatenate([x_col.ravel(), x_col.ravel(), y_col.ravel(), y_col.ravel()]),
        np.concatenate([np.ones(n_x), -np.ones(n_x), -np.ones(y_col.size), np.ones(y_col.size)]),
        np.zeros(n_src * n_planes * nodes),
        np.zeros(n_src * n_planes * nodes),
    )
    link_rows = np.broadcast_to(np.arange(n_links), (n_src, n_links)).ravel()
    lp.block(
        link_rows, x_col.ravel(), np.ones(n_x), np.full(n_links, -np.inf), capacity / unit_gbps
    )
    comm_rows = np.repeat(np.arange(n_comm, dtype=np.int64), n_planes)
    lp.block(
        np.concatenate([comm_rows, np.arange(n_comm)]),
        np.concatenate([y_col.ravel(), np.zeros(n_comm, dtype=np.int64)]),
        np.concatenate([np.ones(y_col.size), -traffic.demand]),
        np.zeros(n_comm),
        np.zeros(n_comm),
    )
    bound = (per_rack[:, None] * uplink[None, :]).ravel()
    for racks_of in (traffic.src, traffic.dst):
        group = (racks_of[:, None] * n_planes + plane_ids[None, :]).ravel()
        lp.block(group, y_col.ravel(), np.ones(y_col.size), np.full(len(bound), -np.inf), bound)
    col_upper = np.full(n_cols, np.inf)
    if traffic.one_to_one:
        col_upper[y_col] = traffic.pairs[:, None] * uplink[None, :]
    return _solve(lp, n_cols, col_upper)[0] * unit_gbps


def _shortest_path_counts(dist: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """[u, t] -> how many shortest u-t paths one plane has (capped far above ECMP's limit)."""
    n = dist.shape[0]
    tail = np.concatenate([edges[:, 0], edges[:, 1]])
    head = np.concatenate([edges[:, 1], edges[:, 0]])
    counts = np.eye(n)
    finite = dist[np.isfinite(dist)]
    for d in range(1, int(finite.max(initial=0)) + 1):
        # A u-t shortest path of d hops is a DAG link u -> v and a shortest v-t path of d - 1.
        on_dag = dist[tail] == dist[head] + 1  # [link, t]
        step = np.where(on_dag & (dist[tail] == d), counts[head], 0.0)
        np.add.at(counts, tail, step)
    return np.minimum(counts, 1e9)


def ecmp_dag_throughput(
    planes: PlaneSet, traffic: PlaneTraffic, dist: list[np.ndarray], unit_gbps: float
) -> float | None:
    """ECMP's MAT as a flow on each plane's shortest-path DAG towards every destination rack:
    any flow on the links of t's DAG decomposes into shortest paths to t, so this is the path
    LP over all shortest paths, aggregated by destination (far fewer columns for all-to-all).
    None when some pair has more shortest paths than ECMP_PATH_LIMIT (the path LP keeps only
    that many, so the two would differ)."""
    if np.any(traffic.plane < 0):
        raise ValueError("ECMP commodities are pinned to a plane")
    tables, capacity = _link_lookup(planes)
    uplink = np.array(planes.uplink_gbps) / unit_gbps
    per_rack = planes.hosts_per_rack()
    # Host uplinks and (one-to-one) commodity-plane bounds only scale with T here, since each
    # commodity's flow sits wholly in its pinned plane: they bound T directly.
    t_bound = np.inf
    for racks in (traffic.src, traffic.dst):
        load = np.zeros((planes.racks, planes.planes))
        np.add.at(load, (racks, traffic.plane), traffic.demand)
        cap = per_rack[:, None] * uplink[None, :]
        with np.errstate(divide="ignore"):
            t_bound = min(t_bound, float(np.min(np.where(load > 0, cap / load, np.inf))))
    if traffic.one_to_one:
        t_bound = min(
            t_bound, float(np.min(traffic.pairs * uplink[traffic.plane] / traffic.demand))
        )
    inter = traffic.src != traffic.dst
    # Every commodity is pinned to one plane, so the planes share nothing but T: the largest
    # T is the smallest of each plane's own, and N small LPs solve faster than one large one.
    for plane, edges in enumerate(planes.edges):
        mine = inter & (traffic.plane == plane)
        if not np.any(mine):
            continue
        d = dist[plane]
        count = _shortest_path_counts(d, edges)
        if np.any(count[traffic.src[mine], traffic.dst[mine]] > ECMP_PATH_LIMIT):
            return None
        if np.any(~np.isfinite(d[traffic.src[mine], traffic.dst[mine]])):
            raise ValueError("an ECMP commodity has no path in its plane")
        t_bound = min(
            t_bound,
            _dag_plane_throughput(planes, traffic, mine, d, tables[plane], capacity / unit_gbps),
        )
    return float(t_bound * unit_gbps) if np.isfinite(t_bound) else float("inf")


def _dag_plane_throughput(
    planes: PlaneSet,
    traffic: PlaneTraffic,
    mine: np.ndarray,
    dist: np.ndarray,
    table: np.ndarray,
    link_capacity: np.ndarray,
) -> float:
    """The largest T (in units) of one plane's commodities `mine` on its shortest-path DAGs."""
    cols: list[np.ndarray] = []  # per destination: link id of every flow column
    conservation: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    supply: list[tuple[np.ndarray, np.ndarray]] = []  # (row, demand) of T per row
    n_cols, n_rows = 0, 0
    u, v = np.nonzero(table >= 0)
    link = table[u, v]
    for t in np.unique(traffic.dst[mine]).tolist():
        on = dist[u, t] == dist[v, t] + 1
        col = n_cols + np.arange(int(on.sum()), dtype=np.int64)
        # Row n_rows + node: conservation of the flow towards t at that node.
        conservation.append(
            (
                np.concatenate([n_rows + u[on], n_rows + v[on]]),
                np.concatenate([col, col]),
                np.concatenate([np.ones(len(col)), -np.ones(len(col))]),
            )
        )
        cols.append(link[on])
        toward = mine & (traffic.dst == t)
        need = np.zeros(planes.switches)
        np.add.at(need, traffic.src[toward], traffic.demand[toward])
        need[t] = -need.sum()
        supply.append((n_rows + np.arange(planes.switches), need))
        n_cols += len(col)
        n_rows += planes.switches
    # Columns: one copy of T per destination block, chained equal (a single T column would
    # make the interior-point factorisation dense), then the flows.
    blocks = len(cols)
    lp = _Rows()
    rows = [r for r, _, _ in conservation]
    lp.block(
        np.concatenate(rows + [s_rows for s_rows, _ in supply]),
        np.concatenate(
            [blocks + c for _, c, _ in conservation]
            + [np.full(len(s_rows), b) for b, (s_rows, _) in enumerate(supply)]
        ),
        np.concatenate([x for _, _, x in conservation] + [-need for _, need in supply]),
        np.zeros(n_rows),
        np.zeros(n_rows),
    )
    # Link rows are numbered within the plane: its link ids are consecutive.
    first, n_links = int(link.min()), len(link)
    lp.block(
        np.concatenate(cols) - first,
        blocks + np.arange(n_cols, dtype=np.int64),
        np.ones(n_cols),
        np.full(n_links, -np.inf),
        link_capacity[first : first + n_links],
    )
    _equal_chain(lp, blocks)
    return _solve(lp, blocks + n_cols, np.inf)[0]


def _one_plane(planes: PlaneSet) -> PlaneSet | None:
    """The first plane alone, when there are several and all are copies of it."""
    first = planes.edges[0]
    same = all(
        np.array_equal(edges, first)
        and planes.link_gbps[p] == planes.link_gbps[0]
        and planes.uplink_gbps[p] == planes.uplink_gbps[0]
        for p, edges in enumerate(planes.edges)
    )
    if planes.planes == 1 or not same:
        return None
    return replace(
        planes, edges=(first,), link_gbps=planes.link_gbps[:1], uplink_gbps=planes.uplink_gbps[:1]
    )


def _copies_of_one_plane(scheme: str, k: int | None, planes: int) -> tuple[int, int | None]:
    """Over identical planes, whether a scheme's MAT is `copies` times one plane's with K = the
    second value; (0, None) when not. An LP whose paths are the same in every plane it uses is
    symmetric under relabelling those planes: averaging an optimum over the relabellings keeps
    T and gives each plane 1/copies of every commodity, which one plane must then carry at
    T / copies; and copying one plane's optimum into each gives T. ECMP pins each pair to a
    hashed plane and FatPaths draws each plane's layers with its own seed: neither is
    symmetric."""
    if scheme in ("mcf", "ksp"):
        return planes, k
    if scheme == "ksp-total" and k is not None and k >= 1:
        # ksp-total ranks equal planes' paths in turn: K < N takes the shortest path of the
        # first K planes, K = qN the q shortest of every plane.
        if k < planes:
            return k, 1
        if k % planes == 0:
            return planes, k // planes
    return 0, None


def mcf_throughput(
    catalogue: PathCatalogue, traffic: PlaneTraffic, unit_gbps: float, max_rounds: int = 200
) -> tuple[float, int, int]:
    """Unconstrained multicommodity flow by column generation on the path LP: start from each
    plane's MCF_START_PATHS shortest paths, then add, for every commodity and plane, the path
    that is shortest under the link duals whenever its reduced cost says it raises T; stop when
    none does.
    The optimum equals the edge formulation's (`mcf_edge_throughput`) but the LP stays small.
    Returns (T in Gb/s, paths in the final LP, rounds)."""
    planes = catalogue.planes
    pairs = sorted(set(zip(traffic.src.tolist(), traffic.dst.tolist(), strict=True)))
    catalogue.prepare_ksp(pairs, MCF_START_PATHS)
    candidates = _candidates(catalogue, traffic, "ksp", MCF_START_PATHS)
    known = [set(c) for c in candidates]
    tables, capacity = _link_lookup(planes)
    n_comm, n_planes, n_links = len(candidates), planes.planes, len(capacity)
    value = 0.0
    for rounds in range(1, max_rounds + 1):
        value, n_paths, duals = path_throughput(planes, traffic, candidates, unit_gbps, True)
        # Row order of path_throughput: demand, links, egress, ingress, commodity-plane.
        y_demand = duals[:n_comm]
        y_link = np.maximum(duals[n_comm : n_comm + n_links], 0.0)
        y_egress = duals[n_comm + n_links :][: planes.racks * n_planes].reshape(-1, n_planes)
        y_ingress = duals[n_comm + n_links + planes.racks * n_planes :][
            : planes.racks * n_planes
        ].reshape(-1, n_planes)
        rest = n_comm + n_links + 2 * planes.racks * n_planes
        y_pair = (
            duals[rest : rest + n_comm * n_planes].reshape(n_comm, n_planes)
            if traffic.one_to_one
            else np.zeros((n_comm, n_planes))
        )
        added = 0
        worst = np.zeros(n_comm)  # each commodity's largest reduced cost over the planes
        inter_rack = np.nonzero(traffic.src != traffic.dst)[0]
        for plane, table in enumerate(tables):
            cost, parent = _dual_shortest_paths(table, y_link, traffic.src)
            gain = -(
                y_demand
                + y_egress[traffic.src, plane]
                + y_ingress[traffic.dst, plane]
                + y_pair[:, plane]
            )
            reduced = np.zeros(n_comm)
            reduced[inter_rack] = (
                gain[inter_rack] - cost[traffic.src[inter_rack], traffic.dst[inter_rack]]
            )
            np.maximum(worst, reduced, out=worst)
            for c in np.nonzero(reduced > _REDUCED_COST_TOLERANCE)[0].tolist():
                path = _walk_back(parent, int(traffic.src[c]), int(traffic.dst[c]))
                if (plane, path) not in known[c]:
                    known[c].add((plane, path))
                    candidates[c].append((plane, path))
                    added += 1
        # Raising each demand row's dual by its commodity's worst reduced cost makes the duals
        # feasible for every path; rescaled, they bound the optimum by T / (1 - gap).
        gap = float(traffic.demand @ worst)
        if added == 0 or gap <= MCF_GAP:
            return value, n_paths, rounds
    raise RuntimeError(f"multicommodity flow did not converge in {max_rounds} rounds")


def _dual_shortest_paths(
    table: np.ndarray, weight: np.ndarray, sources: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Dijkstra from every source rack over one plane with link weights = link duals (a tiny
    floor, since the sparse graph would drop zero-weight links). Rows indexed by rack."""
    u, v = np.nonzero(table >= 0)
    w = weight[table[u, v]] + 1e-9
    graph = sp.csr_matrix((w, (u, v)), shape=table.shape)
    cost = np.full(table.shape, np.inf)
    parent = np.full(table.shape, -9999, dtype=np.int64)
    origin = np.unique(sources)
    dist, pred = dijkstra(graph, directed=True, indices=origin, return_predecessors=True)
    cost[origin], parent[origin] = dist, pred
    return cost, parent


def _walk_back(parent: np.ndarray, s: int, t: int) -> Path:
    path = [t]
    while path[-1] != s:
        path.append(int(parent[s, path[-1]]))
    return tuple(reversed(path))


def _equal_chain(lp: _Rows, n: int) -> None:
    """Columns 0..n-1 all take one value (x_i - x_{i+1} = 0): one throughput for every
    commodity or block."""
    chain = np.arange(n - 1, dtype=np.int64)
    lp.block(
        np.concatenate([chain, chain]),
        np.concatenate([chain, chain + 1]),
        np.concatenate([np.ones(n - 1), -np.ones(n - 1)]),
        np.zeros(n - 1),
        np.zeros(n - 1),
    )


def _solve(
    lp: _Rows, n_cols: int, col_upper: np.ndarray | float, keep_duals: bool = False
) -> tuple[float, np.ndarray]:
    matrix = lp.matrix(n_cols)
    model = column_lp(
        matrix,
        np.concatenate([[1.0], np.zeros(n_cols - 1)]),
        (np.zeros(n_cols), col_upper),
        (np.concatenate(lp.lower), np.concatenate(lp.upper)),
    )
    solver = new_solver()
    if n_cols > _IPM_COLUMNS:
        solver.setOptionValue("solver", "ipm")
        # Crossover to a vertex takes most of the time on these degenerate LPs and is not
        # needed: T and the duals for column generation come from the interior solution.
        solver.setOptionValue("run_crossover", "off")
        if keep_duals:
            # Postsolve of an interior solution spoils the duals column generation prices
            # with. Elsewhere presolve stays on: it makes these LPs 2-3 times faster.
            solver.setOptionValue("presolve", "off")
        else:
            solver.setOptionValue("ipm_optimality_tolerance", IPM_GAP)
    solver.passModel(model)
    solver.run()
    status = solver.getModelStatus()
    info = solver.getInfo()
    # Without crossover HiGHS reports an interior solution that meets its tolerances as
    # "unknown" with feasible primal and dual solutions.
    interior = (
        status == highspy.HighsModelStatus.kUnknown
        and info.primal_solution_status == _FEASIBLE
        and info.dual_solution_status == _FEASIBLE
    )
    if status != highspy.HighsModelStatus.kOptimal and not interior:
        raise RuntimeError(f"throughput LP not solved: {solver.modelStatusToString(status)}")
    solution = solver.getSolution()
    return float(solution.col_value[0]), np.asarray(solution.row_dual)


def plane_throughput(
    catalogue: PathCatalogue,
    pairs: np.ndarray,
    scheme: str,
    k: int | None = None,
    unit_gbps: float | None = None,
) -> PlaneThroughput:
    """MAT of one scheme for a host traffic pattern (pairs from `host_pattern`)."""
    planes = catalogue.planes
    unit = unit_gbps or min(planes.uplink_gbps)
    single = catalogue.single_plane()
    copies, k_one = _copies_of_one_plane(scheme, k, planes.planes)
    if single is not None and copies:
        one = plane_throughput(
            single, pairs, scheme if scheme != "ksp-total" else "ksp", k_one, unit
        )
        return replace(
            one,
            scheme=scheme,
            k=k,
            throughput_gbps=copies * one.throughput_gbps,
            extra={**one.extra, "copies_of_one_plane": float(copies)},
        )
    traffic = plane_traffic(planes, pairs, pin_planes=scheme == "ecmp", seed=catalogue.seed)
    if scheme == "mcf" and not traffic.one_to_one:
        # Many commodities per source (all-to-all): the source-aggregated edge LP is several
        # times faster than column generation and has the same optimum.
        value = mcf_edge_throughput(planes, traffic, unit)
        return PlaneThroughput(scheme, None, value, len(traffic.src), 0)
    if scheme == "ecmp":
        dag = ecmp_dag_throughput(planes, traffic, catalogue.distances(), unit)
        if dag is not None:
            return PlaneThroughput(scheme, None, dag, len(traffic.src), 0)
    if scheme == "mcf":
        value, n_paths, rounds = mcf_throughput(catalogue, traffic, unit)
        return PlaneThroughput(
            scheme, None, value, len(traffic.src), n_paths, extra={"rounds": float(rounds)}
        )
    if scheme in ("ksp", "ksp-total") and (k is None or k < 1):
        raise ValueError(f"scheme {scheme} needs k >= 1")
    candidates = _candidates(catalogue, traffic, scheme, k or 0)
    value, n_paths, _ = path_throughput(planes, traffic, candidates, unit)
    return PlaneThroughput(
        scheme, k if scheme.startswith("ksp") else None, value, len(traffic.src), n_paths
    )
