"""Per-layer forwarding: distances and next hops for every (switch, destination switch).

Tables are per destination switch, not per host: every host of switch t shares one prefix per
layer, so a switch holds n * (Nr - 1) routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.layers import Layer
from fatpaths_cfg.support.stable_hash import mix64, salt

if TYPE_CHECKING:
    import scipy.sparse as sp

UNREACHABLE = 255


@dataclass(frozen=True)
class Routing:
    """`dist[l, s, t]` hops and `next_hop[l, s, t]` switch, for layer index l = number - 1."""

    dist: np.ndarray  # uint8 (n, Nr, Nr); 255 = unreachable
    next_hop: np.ndarray  # int32 (n, Nr, Nr); -1 on the diagonal
    ecmp: bool  # all equal-cost next hops are used, not only next_hop
    # `routing.backup: lfa`: backup[l, s, t], the loop-free alternate a floating static route
    # goes through when next_hop's cable is down; -1 where none exists. None when off.
    backup: np.ndarray | None = None

    @property
    def layer_count(self) -> int:
        return int(self.dist.shape[0])

    @property
    def nr(self) -> int:
        return int(self.dist.shape[1])


def layer_seed(seed: int, number: int) -> int:
    """A per-layer tie-break seed, so layers spread ties over different links."""
    return int(np.random.SeedSequence([seed, number, 0x5EED]).generate_state(1, np.uint64)[0])


def compute_routing(
    nr: int,
    edges: np.ndarray,
    layers: list[Layer],
    seed: int,
    ecmp: bool = False,
    switch_keys: np.ndarray | None = None,
    prefer: np.ndarray | None = None,
) -> Routing:
    """Tables of every layer. With `switch_keys` (hashes of the switches' names), a tie
    between equal-cost next hops goes to the neighbour of highest random weight by name, so a
    next hop that stays among the shortest after a change stays chosen (unless a new equal-cost
    neighbour outranks it). `prefer` ([layer, switch, destination], -1 = none), the next hops
    of an earlier compile, wins every tie it is part of: then only routes whose old next hop
    stopped being a shortest-path one move."""
    dist = np.empty((len(layers), nr, nr), dtype=np.uint8)
    next_hop = np.empty((len(layers), nr, nr), dtype=np.int32)
    for i, layer in enumerate(layers):
        kept = np.ascontiguousarray(edges[layer.links], dtype=np.int32)
        rank = None if layer.rank is None else np.ascontiguousarray(layer.rank, dtype=np.int32)
        # Written as [switch, destination], the way operators and configs read them.
        _native.layer_forwarding_into(
            nr,
            np.ascontiguousarray(kept[:, 0]),
            np.ascontiguousarray(kept[:, 1]),
            layer_seed(seed, layer.number),
            rank,
            dist[i],
            next_hop[i],
            switch_keys,
            None if prefer is None else np.ascontiguousarray(prefer[i], dtype=np.int32),
        )
    return Routing(dist, next_hop, ecmp)


def hop_distances(nr: int, edges: np.ndarray) -> np.ndarray:
    """Shortest-path hop counts between every pair of switches over `edges` (E x 2), uint8 with
    UNREACHABLE; symmetric, links being undirected. No next hops are searched for."""
    kept = np.ascontiguousarray(edges, dtype=np.int32).reshape(-1, 2)
    return _native.layer_distances(
        nr, np.ascontiguousarray(kept[:, 0]), np.ascontiguousarray(kept[:, 1])
    )


def layer_neighbours(nr: int, edges: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    kept = edges[mask]
    heads = np.concatenate([kept[:, 0], kept[:, 1]])
    tails = np.concatenate([kept[:, 1], kept[:, 0]])
    order = np.lexsort((tails, heads))
    heads, tails = heads[order], tails[order]
    bounds = np.searchsorted(heads, np.arange(nr + 1))
    return [tails[bounds[s] : bounds[s + 1]] for s in range(nr)]


def equal_cost_counts(adjacency: sp.csr_matrix, dist: np.ndarray) -> np.ndarray:
    """counts[s, t] = neighbours of s in the layer that are one hop closer to t."""
    nr = dist.shape[0]
    counts = np.zeros((nr, nr), dtype=np.int32)
    reachable = dist != UNREACHABLE
    for hops in range(1, int(dist[reachable].max(initial=0)) + 1):
        at_prev = (dist == hops - 1).astype(np.float32)
        closer = np.asarray(adjacency @ at_prev)
        here = dist == hops
        counts[here] = closer[here].astype(np.int32)
    return counts


def layer_adjacency(nr: int, edges: np.ndarray, mask: np.ndarray) -> sp.csr_matrix:
    import scipy.sparse as sp  # ECMP layers only: single-path compiles skip its import

    kept = edges[mask]
    rows = np.concatenate([kept[:, 0], kept[:, 1]])
    cols = np.concatenate([kept[:, 1], kept[:, 0]])
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(nr, nr))


def layer_route_counts(
    nr: int, edges: np.ndarray, layers: list[Layer], routing: Routing
) -> np.ndarray:
    """[layer, switch] routes: one per reachable destination switch (Nr-1 in one plane, the
    plane's switches but one with parallel planes), or the equal-cost next hops with ECMP."""
    counts = (routing.dist != UNREACHABLE).sum(axis=2).astype(np.int64) - 1
    if routing.ecmp:
        for i, layer in enumerate(layers):
            adjacency = layer_adjacency(nr, edges, layer.links)
            counts[i] = equal_cost_counts(adjacency, routing.dist[i]).sum(axis=1)
    return counts


def route_counts(nr: int, edges: np.ndarray, layers: list[Layer], routing: Routing) -> list[int]:
    """Layer routes per switch: n*(Nr-1), times the equal-cost next hops when ECMP is on."""
    totals: list[int] = layer_route_counts(nr, edges, layers, routing).sum(axis=0).tolist()
    return totals


def loop_free_alternates(
    nr: int,
    edges: np.ndarray,
    layers: list[Layer],
    routing: Routing,
    seed: int,
    switch_keys: np.ndarray,
) -> np.ndarray:
    """backup[l, s, t]: per route, a neighbour N of s in layer l other than the primary next
    hop with dist(N, t) < dist(N, s) + dist(s, t) (RFC 5286, inequality 1; dist(N, s) = 1), or
    -1. Downstream alternates (dist(N, t) < dist(s, t)) win over the others, as they also hold
    when several cables fail; among equals the highest random weight by names, so a backup
    depends on its switches' names and not on where they sit in a list (OPERATIONS.md 1).

    Loop-free under any single cable failure: only the switch at the failed cable's upstream
    end leaves its primary, and its alternate's primary path descends strictly in distance
    below dist(s, t), so it neither returns to s nor crosses the failed cable."""
    backup = np.full(routing.next_hop.shape, -1, dtype=np.int32)
    keys = np.ascontiguousarray(switch_keys, dtype=np.uint64)
    for i, layer in enumerate(layers):
        neighbours = layer_neighbours(nr, edges, layer.links)
        dist = routing.dist[i].astype(np.int16)
        stream = np.uint64(salt("backup", seed, layer.number))
        destination_keys = mix64(keys ^ stream)
        for s in range(nr):
            candidates = np.unique(neighbours[s])
            if len(candidates) < 2:
                continue  # one cable: nothing to fall back on
            own = dist[s]
            via = dist[candidates]  # (k, nr)
            routed = (own > 0) & (own != UNREACHABLE)
            loop_free = (
                routed[None, :]
                & (candidates[:, None] != routing.next_hop[i, s][None, :])
                & (via < own[None, :] + 1)
            )
            downstream = (via < own[None, :]).astype(np.uint64) << np.uint64(63)
            weight = mix64(keys[candidates][:, None] ^ mix64(destination_keys ^ keys[s])[None, :])
            score = np.where(
                loop_free, downstream | ((weight >> np.uint64(2)) + np.uint64(1)), np.uint64(0)
            )
            best = np.argmax(score, axis=0)
            found = loop_free.any(axis=0)
            backup[i, s] = np.where(found, candidates[best], -1)
    return backup


def backup_coverage(routing: Routing) -> list[float]:
    """Per layer: the share of routes (switch, destination) that have a backup."""
    if routing.backup is None:
        return [0.0] * routing.layer_count
    routed = routing.next_hop >= 0
    covered = (routing.backup >= 0) & routed
    totals = routed.sum(axis=(1, 2))
    return [
        float(c) / float(t) if t else 0.0
        for c, t in zip(covered.sum(axis=(1, 2)).tolist(), totals.tolist(), strict=True)
    ]
