"""Traffic patterns: which hosts every host sends to. Shared by the simulator's workloads and
`analyze --traffic`, so that a pattern name means the same traffic in both.

Patterns follow FatPaths §VI-C (uniform, permutation, off-diagonal, skewed off-diagonal, shuffle,
stencil, adversarial, worst-case by max-weight matching) and SC'15 §4 (the per-topology worst cases,
all-to-all and nearest-neighbour exchanges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

UNREACHABLE = 255

PATTERNS = (
    "uniform",
    "permutation",
    "off-diagonal",
    "skewed-off-diagonal",
    "shuffle",
    "stencil",
    "adversarial",
    "worst-case",
    "worst-case-matching",
    "all-to-all",
    "nearest-neighbour",
)
# Earlier spellings still accepted on the command line.
ALIASES = {"offdiagonal": "off-diagonal", "nearest-neighbor": "nearest-neighbour"}


class PatternError(ValueError):
    """A pattern that cannot be built for this fabric."""


@dataclass(frozen=True)
class PatternSite:
    """What a pattern needs to know of a fabric."""

    host_switch: IntArray  # switch index per host; hosts of a switch are numbered contiguously
    dist: npt.NDArray[np.uint8]  # switch-to-switch hops over all links, 255 = unreachable
    generator: dict[str, Any] | None  # the inventory's `generate` block (kind, parameters)

    @property
    def n_hosts(self) -> int:
        return len(self.host_switch)

    @property
    def n_switches(self) -> int:
        return int(self.dist.shape[0])

    def hosts_per_switch(self) -> IntArray:
        return np.bincount(self.host_switch, minlength=self.n_switches).astype(np.int64)


def canonical(pattern: str) -> str:
    name = ALIASES.get(pattern, pattern)
    if name not in PATTERNS:
        raise PatternError(f"unknown pattern {pattern!r}; expected one of {', '.join(PATTERNS)}")
    return name


def derangement(n: int, rng: np.random.Generator) -> IntArray:
    """A uniformly random permutation without fixed points (rejection, ~e tries)."""
    while True:
        perm = rng.permutation(n)
        if n < 2 or not np.any(perm == np.arange(n)):
            return perm.astype(np.int64)


def _assignment(cost: npt.NDArray[np.float64]) -> tuple[IntArray, IntArray]:
    """Minimum-cost assignment. scipy.optimize is imported here, when a pattern needs it:
    importing it costs more than a whole small simulation."""
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return rows, cols


def _host_switches(site: PatternSite) -> IntArray:
    return np.flatnonzero(site.hosts_per_switch() > 0).astype(np.int64)


def switch_level_peers(site: PatternSite, switch_map: IntArray) -> list[IntArray]:
    """Host i of switch s talks to host i of switch switch_map[s] (fewer hosts: wrap around)."""
    members = [np.flatnonzero(site.host_switch == s) for s in range(site.n_switches)]
    peers: list[IntArray] = [np.empty(0, dtype=np.int64)] * site.n_hosts
    for s, hosts in enumerate(members):
        t = switch_map[s]
        if t < 0 or len(hosts) == 0 or len(members[t]) == 0:
            continue
        for i, h in enumerate(hosts):
            peers[h] = np.array([members[t][i % len(members[t])]], dtype=np.int64)
    return peers


def adversarial_switch_map(site: PatternSite, rng: np.random.Generator) -> IntArray:
    """Pair host switches with neighbours: under minimal routing all p flows of a switch then
    share its single direct link, the skewed off-diagonal case that layers exist for."""
    sw = _host_switches(site)
    dist = site.dist[np.ix_(sw, sw)].astype(np.float64)
    # Prefer distance 1, then short; random noise picks among equals.
    cost = np.where(dist == 1, 0.0, dist + 10.0) + rng.random(dist.shape) * 1e-3
    np.fill_diagonal(cost, 1e9)
    rows, cols = _assignment(cost)
    mapping = np.full(site.n_switches, -1, dtype=np.int64)
    mapping[sw[rows]] = sw[cols]
    return mapping


def matching_switch_map(
    site: PatternSite, rng: np.random.Generator, fixed: IntArray | None = None
) -> IntArray:
    """Maximum-weight matching of host switches maximising minimal path length (FatPaths'
    worst case). Switches already mapped in `fixed` keep their partner."""
    mapping = np.full(site.n_switches, -1, dtype=np.int64) if fixed is None else fixed.copy()
    sw = _host_switches(site)
    sources = sw[mapping[sw] < 0]
    taken = set(mapping[mapping >= 0].tolist())
    targets = np.array([t for t in sw.tolist() if t not in taken], dtype=np.int64)
    if len(sources) == 0 or len(targets) == 0:
        return mapping
    dist = site.dist[np.ix_(sources, targets)].astype(np.float64)
    dist[dist == UNREACHABLE] = -1e9
    dist[sources[:, None] == targets[None, :]] = -1e9
    rows, cols = _assignment(-(dist + rng.random(dist.shape) * 1e-3))
    mapping[sources[rows]] = targets[cols]
    return mapping


def slimfly_switch_map(site: PatternSite, rng: np.random.Generator) -> IntArray:
    """SC'15's Slim Fly worst case under minimal routing: switches talk in pairs two hops apart
    whose paths overlap, A -> C over A-B-C and B -> D over B-C-D, so link B->C carries the 2p
    flows of A and B.

    Chained around a cycle v0, v1, ... through every host switch, each v_i sending to v_{i+2}
    over its only minimal path v_i-v_{i+1}-v_{i+2}, every switch's flows share both their links
    with another switch's: every link the pattern uses carries exactly 2p flows (a greedy
    pairing leaves some switches without a partner). Where no such cycle turns up, the greedy
    pairing."""
    cycle = _overlapping_cycle(site, rng)
    if cycle is None:
        return _greedy_overlapping_pairs(site, rng)
    mapping = np.full(site.n_switches, -1, dtype=np.int64)
    mapping[cycle] = np.roll(cycle, -2)
    return mapping


def _overlapping_cycle(
    site: PatternSite, rng: np.random.Generator, steps: int = 100_000
) -> IntArray | None:
    """A cycle through every host switch in which each switch's successor but one is two hops
    away with the switch between them as the only common neighbour (so minimal routing takes
    the cycle's links). Random extension of a path, and Posa rotations where it gets stuck."""
    adj = site.dist == 1
    common = adj.astype(np.int64) @ adj.astype(np.int64)
    one_route = (site.dist == 2) & (common == 1)
    hosts = site.hosts_per_switch() > 0
    nodes = np.flatnonzero(hosts)
    if len(nodes) < 5:
        return None
    neighbours = [np.flatnonzero(adj[v] & hosts).tolist() for v in range(site.n_switches)]
    path = [int(rng.choice(nodes))]
    on_path = np.zeros(site.n_switches, dtype=bool)
    on_path[path[0]] = True
    for _ in range(steps):
        last = path[-1]
        onward = [
            w
            for w in neighbours[last]
            if not on_path[w] and (len(path) < 2 or one_route[path[-2], w])
        ]
        if onward:
            w = onward[int(rng.integers(len(onward)))]
            path.append(w)
            on_path[w] = True
            continue
        if len(path) == len(nodes) and _closes(path, adj, one_route):
            return np.array(path, dtype=np.int64)
        path = _rotated(path, adj, one_route, rng)
    return None


def _closes(path: list[int], adj: npt.NDArray[np.bool_], one_route: npt.NDArray[np.bool_]) -> bool:
    first, second, before_last, last = path[0], path[1], path[-2], path[-1]
    return bool(adj[last, first] and one_route[before_last, first] and one_route[last, second])


def _rotated(
    path: list[int],
    adj: npt.NDArray[np.bool_],
    one_route: npt.NDArray[np.bool_],
    rng: np.random.Generator,
) -> list[int]:
    """Posa rotation: the last switch's link to path[i] makes path[i+1] the new end (the
    segment after i reversed), where the two new two-hop pairs keep a single route; with no
    such link, the path turned round to grow from its other end."""
    last, before_last = path[-1], path[-2]
    pivots = [
        i
        for i in range(1, len(path) - 2)
        if adj[last, path[i]] and one_route[path[i - 1], last] and one_route[path[i], before_last]
    ]
    if not pivots:
        return path[::-1]
    i = pivots[int(rng.integers(len(pivots)))]
    return path[: i + 1] + path[i + 1 :][::-1]


def _greedy_overlapping_pairs(site: PatternSite, rng: np.random.Generator) -> IntArray:
    """Pairs A -> C over A-B-C and B -> D over B-C-D, greedy over the directed links in random
    order; switches left over are paired by the max-weight matching."""
    dist = site.dist
    hosts = site.hosts_per_switch() > 0
    mapping = np.full(site.n_switches, -1, dtype=np.int64)
    received = np.zeros(site.n_switches, dtype=bool)
    neighbours = [np.flatnonzero(dist[v] == 1) for v in range(site.n_switches)]

    def free_source(v: int) -> bool:
        return bool(hosts[v] and mapping[v] < 0)

    def free_target(v: int) -> bool:
        return bool(hosts[v] and not received[v])

    links = [(b, c) for b in range(site.n_switches) for c in neighbours[b].tolist()]
    for j in rng.permutation(len(links)).tolist():
        b, c = links[j]
        if not (free_source(b) and free_target(c)):
            continue
        firsts = [
            a
            for a in rng.permutation(neighbours[b]).tolist()
            if a != b and dist[a, c] == 2 and free_source(a)
        ]
        lasts = [
            d for d in rng.permutation(neighbours[c]).tolist() if dist[b, d] == 2 and free_target(d)
        ]
        if firsts and lasts:
            mapping[firsts[0]], received[c] = c, True
            mapping[b], received[lasts[0]] = lasts[0], True
    return matching_switch_map(site, rng, mapping)


@dataclass(frozen=True)
class SkewedOffset:
    """The offset of a skewed off-diagonal on one fabric and how remote it is."""

    shift: int  # host switches on, in switch order
    offset: int | None  # the same in hosts (shift * p), None if host switches differ in p
    distance: int  # the farthest distance between host switches (hops)
    share_at_distance: float  # share of host switches whose destination is that far
    mean_distance: float  # mean hops from a host switch to its destination


def skewed_offset(site: PatternSite, offset: int | None = None) -> SkewedOffset:
    """FatPaths' adversarial pattern (§II, Figure 11): an off-diagonal t(s) = (s + c) mod N
    with a large, skewed offset c that makes many paths collide. Skewed: c is a whole number
    of switches' hosts (c = shift * p), so the p hosts of every switch send to the p hosts of
    one switch and their flows collide p-way on its minimal paths ("the traffic causes p-way
    collisions").

    The offset is chosen per topology so that it is equally remote on every network: the shift
    that puts the most host switches' destinations at the network's largest switch-to-switch
    distance (the diameter between host switches: 2 hops on a Slim Fly, 4 on a three-level
    fat tree), then the largest mean distance, then the shift nearest half the host switches
    (the largest offset), then the smaller. No random draw: the same fabric gives the same
    offset whatever the seed. An explicit `offset` (in hosts) must be a multiple of p.
    """
    switches = _host_switches(site)
    count = len(switches)
    if count < 2:
        raise PatternError("skewed-off-diagonal needs hosts on at least two switches")
    per_switch = site.hosts_per_switch()[switches]
    uniform = bool(np.all(per_switch == per_switch[0]))
    p = int(per_switch[0])
    ring = np.arange(count)
    dist = site.dist[np.ix_(switches, switches)].astype(np.int64)
    reachable = dist[dist != UNREACHABLE]
    far = int(reachable.max())
    if offset is not None:
        shift = _explicit_shift(offset, p, count, uniform)
    else:
        shift = max(range(1, count), key=lambda m: _remoteness(dist, ring, m, far, count))
    hops = dist[ring, (ring + shift) % count]
    if np.any(hops == UNREACHABLE):
        raise PatternError(f"skewed-off-diagonal: shift {shift} reaches an unreachable switch")
    return SkewedOffset(
        shift=shift,
        offset=shift * p if uniform else None,
        distance=far,
        share_at_distance=float(np.mean(hops == far)),
        mean_distance=float(hops.mean()),
    )


def _remoteness(
    dist: IntArray, ring: IntArray, shift: int, far: int, count: int
) -> tuple[int, int, int, int]:
    """The sort key of `skewed_offset`'s rule (larger is better); a shift that reaches an
    unreachable switch comes last."""
    hops = dist[ring, (ring + shift) % count]
    if np.any(hops == UNREACHABLE):
        return (-1, 0, 0, 0)
    return (int(np.sum(hops == far)), int(hops.sum()), -abs(2 * shift - count), -shift)


def _explicit_shift(offset: int, p: int, count: int, uniform: bool) -> int:
    if not uniform:
        raise PatternError(
            "--offset: skewed-off-diagonal takes an offset only where every host switch has "
            "the same number of hosts (leave it out to have it chosen)"
        )
    if offset % p:
        raise PatternError(
            f"--offset {offset}: skewed-off-diagonal needs a multiple of the {p} hosts per "
            "switch (a whole switch's hosts)"
        )
    shift = (offset // p) % count
    if shift == 0:
        raise PatternError(
            f"--offset {offset}: a multiple of the {count * p} hosts maps every host onto itself"
        )
    return shift


def skewed_off_diagonal(site: PatternSite, offset: int | None = None) -> list[IntArray]:
    """Host i of the j-th host switch sends to host i of the (j + shift)-th (see
    `skewed_offset`); with p hosts on every host switch, host h sends to (h + shift * p) mod N."""
    chosen = skewed_offset(site, offset)
    switches = _host_switches(site)
    mapping = np.full(site.n_switches, -1, dtype=np.int64)
    mapping[switches] = np.roll(switches, -chosen.shift)
    return switch_level_peers(site, mapping)


def _topology_worst_case(site: PatternSite, rng: np.random.Generator) -> list[IntArray]:
    kind = (site.generator or {}).get("kind")
    if kind == "slimfly":
        return switch_level_peers(site, slimfly_switch_map(site, rng))
    if kind in ("mlfm", "oft"):
        # SC'15: a shift by one switch's hosts (h on MLFM, k on OFT) sends every switch's
        # traffic to a switch reached by a single minimal path.
        shift = int((site.generator or {})["h" if kind == "mlfm" else "k"])
        return _off_diagonal(site.n_hosts, shift)
    return switch_level_peers(site, matching_switch_map(site, rng))


def _off_diagonal(n: int, offset: int) -> list[IntArray]:
    if offset % n == 0:
        raise PatternError(f"off-diagonal offset {offset} is a multiple of {n} hosts")
    return [np.array([(h + offset) % n], dtype=np.int64) for h in range(n)]


def torus_dims(n: int) -> tuple[int, int, int]:
    """The most cubic X x Y x Z = n, X <= Y <= Z (SC'15 maps its 3-D torus contiguously)."""
    best = (1, 1, n)
    for x in range(1, round(n ** (1 / 3)) + 2):
        if n % x:
            continue
        for y in range(x, int((n // x) ** 0.5) + 1):
            if (n // x) % y == 0:
                z = n // x // y
                if max(x, y, z) - min(x, y, z) < max(best) - min(best):
                    best = (x, y, z)
    return best


def _nearest_neighbour(n: int) -> list[IntArray]:
    """Each rank exchanges with its +-1 neighbours in every dimension of a 3-D torus of n
    ranks, X fastest (so X neighbours share a switch under contiguous host numbering)."""
    x_size, y_size, z_size = torus_dims(n)
    peers = []
    for h in range(n):
        x, y, z = h % x_size, (h // x_size) % y_size, h // (x_size * y_size)
        found = {
            (x + dx) % x_size + x_size * ((y + dy) % y_size + y_size * ((z + dz) % z_size))
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))
        }
        found.discard(h)
        peers.append(np.array(sorted(found), dtype=np.int64))
    return peers


def pattern_peers(
    site: PatternSite, pattern: str, rng: np.random.Generator, *, offset: int | None = None
) -> list[IntArray]:
    """For every host, the hosts it sends to under `pattern` (empty: the host stays idle).

    `uniform` returns no list: its destinations are drawn per flow (see `all-to-all` for
    every pair at once).
    """
    n = site.n_hosts
    hosts = np.arange(n, dtype=np.int64)
    if n < 2:
        raise PatternError("a pattern needs at least two hosts")
    name = canonical(pattern)
    if name == "uniform":
        return []
    if name == "all-to-all":
        return [np.delete(hosts, h) for h in range(n)]
    if name == "permutation":
        perm = derangement(n, rng)
        return [perm[h : h + 1] for h in range(n)]
    if name == "off-diagonal":
        default = int(site.hosts_per_switch().max())
        return _off_diagonal(n, offset if offset is not None else default)
    if name == "skewed-off-diagonal":
        return skewed_off_diagonal(site, offset)
    if name == "shuffle":
        bits = int(np.floor(np.log2(n)))
        m = 1 << bits
        rotated = ((hosts[:m] << 1) | (hosts[:m] >> (bits - 1))) & (m - 1)
        return [
            rotated[h : h + 1] if h < m and rotated[h] != h else np.empty(0, dtype=np.int64)
            for h in range(n)
        ]
    if name == "stencil":
        far = 1337 if n > 10_000 else 42
        offsets = np.array([1, -1, far, -far])
        return [np.unique((h + offsets) % n) for h in range(n)]
    if name == "nearest-neighbour":
        return _nearest_neighbour(n)
    if name == "adversarial":
        return switch_level_peers(site, adversarial_switch_map(site, rng))
    if name == "worst-case":
        return _topology_worst_case(site, rng)
    return switch_level_peers(site, matching_switch_map(site, rng))
