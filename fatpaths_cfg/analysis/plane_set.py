"""Parallel dataplanes (P-Net) as the analyses see them: racks, one switch graph per plane.

A `PlaneSet` is the plain form every plane analysis works on: plane p is a graph on the racks
(rack r's switch in plane p is node r), its links run at `link_gbps[p]`, and every host has one
uplink per plane at `uplink_gbps[p]`. A serial fabric is a one-plane set. Candidate paths per
plane come from here too: all shortest paths (ECMP), the K shortest simple paths (KSP) and the
paths of FatPaths layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fatpaths_cfg.compiled.paths import Path
from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.topologies import generate

IntArray = np.ndarray

# Simple paths of one length collected before ranking ties; bounds the work on long detours.
_TIE_POOL = 4096


@dataclass(frozen=True)
class PlaneSet:
    """Racks attached to every plane; `edges[p]` is plane p's (E_p, 2) rack-to-rack links."""

    name: str
    racks: int
    edges: tuple[IntArray, ...]
    link_gbps: tuple[float, ...]
    uplink_gbps: tuple[float, ...]
    host_rack: IntArray  # host index -> rack
    # Nodes per plane graph: racks first, then switches without hosts (spines of a Clos plane).
    switches: int = 0

    def __post_init__(self) -> None:
        if not (len(self.edges) == len(self.link_gbps) == len(self.uplink_gbps) >= 1):
            raise ValueError("edges, link_gbps and uplink_gbps need one entry per plane")
        if self.switches < self.racks:
            object.__setattr__(self, "switches", self.racks)

    @property
    def planes(self) -> int:
        return len(self.edges)

    @property
    def hosts(self) -> int:
        return len(self.host_rack)

    def hosts_per_rack(self) -> IntArray:
        return np.bincount(self.host_rack, minlength=self.racks)

    def hops(self, plane: int, alive: IntArray | None = None) -> np.ndarray:
        """Switch-to-switch hop counts in one plane (inf where cut off)."""
        edges = self.edges[plane] if alive is None else self.edges[plane][alive]
        return hop_matrix(self.switches, edges)


def hop_matrix(racks: int, edges: IntArray) -> np.ndarray:
    ones = np.ones(len(edges))
    graph = csr_matrix((ones, (edges[:, 0], edges[:, 1])), shape=(racks, racks))
    return shortest_path(graph, directed=False, unweighted=True)


def jellyfish_planes(
    name: str,
    racks: int,
    degree: int,
    hosts_per_rack: int,
    planes: int,
    heterogeneous: bool,
    seed: int,
    link_gbps: float,
) -> PlaneSet:
    """Jellyfish planes from the repository's generator, seeded as `generate: {planes:,
    heterogeneous:}` seeds them: a heterogeneous set draws plane p with the compiler's per-plane
    seed, a homogeneous set repeats the graph of `seed` in every plane."""
    from fatpaths_cfg.support.stable_hash import plane_seed

    params = {"nr": racks, "k": degree, "p": hosts_per_rack}
    graphs = []
    for plane in range(planes):
        topology = generate("jellyfish", params, plane_seed(seed, plane) if heterogeneous else seed)
        graphs.append(np.array(topology.edges, dtype=np.int64).reshape(-1, 2))
    return PlaneSet(
        name=name,
        racks=racks,
        edges=tuple(graphs),
        link_gbps=(link_gbps,) * planes,
        uplink_gbps=(link_gbps,) * planes,
        host_rack=np.repeat(np.arange(racks, dtype=np.int64), hosts_per_rack),
    )


def neighbours(racks: int, edges: IntArray) -> list[list[int]]:
    around: list[list[int]] = [[] for _ in range(racks)]
    for u, v in edges.tolist():
        around[u].append(v)
        around[v].append(u)
    return [sorted(n) for n in around]


def simple_paths_within(
    around: list[list[int]], dist_to_t: np.ndarray, s: int, t: int, length: int, pool: int
) -> list[Path]:
    """Simple s-t paths of at most `length` hops (at most `pool` of them), by depth-first search
    pruned with the hop distance to t, so only prefixes that can still arrive are extended."""
    found: list[Path] = []
    path = [s]
    on_path = {s}
    stack = [iter(around[s])]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        if nxt in on_path or len(path) + dist_to_t[nxt] > length:
            continue
        if nxt == t:
            found.append((*path, t))
            if len(found) >= pool:
                break
            continue
        path.append(nxt)
        on_path.add(nxt)
        stack.append(iter(around[nxt]))
    return found


def nested_shortest_paths(
    around: list[list[int]],
    dist_to_t: np.ndarray,
    s: int,
    t: int,
    k: int,
    rng: np.random.Generator,
) -> tuple[list[Path], bool]:
    """The k shortest simple s-t paths, shortest first, and whether every smaller k's answer
    (from the same rng seed) is a prefix of them. Ties between paths of equal length are
    ranked at random from `rng` (a fixed order, such as DFS order, would pile the first paths
    onto one first hop). The answer is nested unless the search hit its pool of paths: a
    smaller k stops at a shorter length, where it sees every path of each length, while a
    capped search may have missed some of them, and the ranking of a length's ties depends on
    how many there are."""
    if not np.isfinite(dist_to_t[s]):
        return [], True
    length = int(dist_to_t[s])
    limit = len(around) - 1
    while True:
        paths = simple_paths_within(around, dist_to_t, s, t, length, _TIE_POOL)
        if len(paths) >= k or length >= limit:
            break
        length += 1
    by_length: dict[int, list[Path]] = {}
    for path in paths:
        by_length.setdefault(len(path), []).append(path)
    ranked: list[Path] = []
    for size in sorted(by_length):
        group = by_length[size]
        order = rng.permutation(len(group))
        ranked.extend(group[i] for i in order[: k - len(ranked)])
        if len(ranked) >= k:
            break
    return ranked, len(paths) < _TIE_POOL


def shortest_paths(
    around: list[list[int]], dist_to_t: np.ndarray, s: int, t: int, limit: int
) -> list[Path]:
    """All shortest s-t paths (ECMP's candidates), at most `limit` of them."""
    if not np.isfinite(dist_to_t[s]):
        return []
    return simple_paths_within(around, dist_to_t, s, t, int(dist_to_t[s]), limit)


def plane_set_from_fabric(fabric: Fabric) -> tuple[PlaneSet, list[np.ndarray]]:
    """The plane set of a compiled fabric, plus per plane the fabric switch index of each node.

    Rack r is the r-th plane-0 switch with hosts; its switch in plane p is where the rack's
    hosts plug their plane-p uplink. Switches without hosts (spines) follow the racks.
    """
    planes = fabric.planes
    rack_of_switch: dict[int, int] = {}
    for host in fabric.hosts:
        rack_of_switch.setdefault(host.uplinks[0].switch, len(rack_of_switch))
    racks = len(rack_of_switch)
    host_rack = np.array([rack_of_switch[h.uplinks[0].switch] for h in fabric.hosts], np.int64)
    members: list[np.ndarray] = []
    for plane in range(planes):
        node: dict[int, int] = {}
        for host in fabric.hosts:
            if len(host.uplinks) != planes:
                raise ValueError(
                    f"host {host.name} has {len(host.uplinks)} uplinks, "
                    f"the fabric has {planes} planes"
                )
            switch = host.uplinks[plane].switch
            rack = rack_of_switch[host.uplinks[0].switch]
            if node.setdefault(switch, rack) != rack:
                raise ValueError(
                    f"plane {plane}: switch {fabric.switches[switch].name} serves "
                    "hosts of two racks"
                )
        for switch in fabric.switches_of_plane(plane):
            node.setdefault(switch, len(node))
        order = np.empty(len(node), dtype=np.int64)
        order[list(node.values())] = list(node.keys())
        members.append(order)
    edges, link_gbps = [], []
    for plane in range(planes):
        local = {int(s): i for i, s in enumerate(members[plane])}
        links = [link for link in fabric.links if fabric.switches[link.a].plane == plane]
        speeds = {link.speed_gbps for link in links}
        if len(speeds) > 1:
            raise ValueError(
                f"plane {plane} mixes link speeds {sorted(speeds)}: the plane "
                "analysis takes one speed per plane"
            )
        edges.append(
            np.array([[local[link.a], local[link.b]] for link in links], dtype=np.int64).reshape(
                -1, 2
            )
        )
        link_gbps.append(speeds.pop() if speeds else 0.0)
    uplink = min((h.speed_gbps for h in fabric.hosts), default=1.0)
    plane_set = PlaneSet(
        name=fabric.name,
        racks=racks,
        edges=tuple(edges),
        link_gbps=tuple(link_gbps),
        uplink_gbps=(uplink,) * planes,
        host_rack=host_rack,
        switches=max(len(m) for m in members),
    )
    return plane_set, members


def plane_next_hops(next_hop: np.ndarray, members: list[np.ndarray]) -> list[np.ndarray]:
    """Per plane, the compiled layers' next hops [layer, node, node] in plane-local numbering
    (a fabric layer is the union of every plane's layer, so it splits back per plane)."""
    tables = []
    for order in members:
        local = np.full(next_hop.shape[1], -1, dtype=np.int64)
        local[order] = np.arange(len(order))
        sub = next_hop[:, order][:, :, order].astype(np.int64)
        tables.append(np.where(sub >= 0, local[np.maximum(sub, 0)], -1))
    return tables
