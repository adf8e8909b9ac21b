"""Jellyfish: a seeded random k'-regular graph, built as in Singla et al. (NSDI'12)."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    IntArray,
    ParameterSpec,
    TopologyParameterError,
    check_invariants,
    edge_list,
    host_count,
    is_connected,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec("nr", int, True, None, "number of switches"),
    ParameterSpec("k", int, True, None, "network radix k' (switch-to-switch ports per switch)"),
    ParameterSpec("p", int, False, None, "hosts per switch (default floor(k'/2))"),
)

# Each attempt is a fresh draw from the same generator stream, so retries stay deterministic.
MAX_ATTEMPTS = 50
# Random pair draws before falling back to enumerating the remaining candidate pairs.
_RANDOM_TRIES = 16


class _Draws:
    """Buffered uniform integers from one numpy Generator (per-call draws are slow)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._buffer: list[int] = []

    def below(self, n: int) -> int:
        if not self._buffer:
            # Modulo bias with 2^62 buckets is far below anything observable.
            self._buffer = self._rng.integers(0, 2**62, size=4096).tolist()
        return self._buffer.pop() % n


def _random_regular(nr: int, k: int, rng: np.random.Generator) -> IntArray | None:
    """One Jellyfish construction; None if it could not fill every port.

    Phase 1 links random pairs of switches with free ports that are not yet adjacent. When no
    such pair is left, phase 2 repairs: a switch with free ports takes over a random existing
    link (x, y) (removing it and linking itself to x and y), as in the Jellyfish paper.
    """
    draws = _Draws(rng)
    adj: list[set[int]] = [set() for _ in range(nr)]
    free = [k] * nr
    open_nodes = list(range(nr))
    where = list(range(nr))

    def close(u: int) -> None:
        i = where[u]
        last = open_nodes[-1]
        open_nodes[i] = last
        where[last] = i
        open_nodes.pop()

    def link(u: int, v: int) -> None:
        adj[u].add(v)
        adj[v].add(u)
        for w in (u, v):
            free[w] -= 1
            if free[w] == 0:
                close(w)

    def unlink(u: int, v: int) -> None:
        adj[u].discard(v)
        adj[v].discard(u)
        for w in (u, v):
            if free[w] == 0:
                where[w] = len(open_nodes)
                open_nodes.append(w)
            free[w] += 1

    while len(open_nodes) >= 2:
        n_open = len(open_nodes)
        for _ in range(_RANDOM_TRIES):
            u = open_nodes[draws.below(n_open)]
            v = open_nodes[draws.below(n_open)]
            if u != v and v not in adj[u]:
                link(u, v)
                break
        else:
            pairs = [
                (u, v)
                for i, u in enumerate(open_nodes)
                for v in open_nodes[i + 1 :]
                if v not in adj[u]
            ]
            if not pairs:
                break
            link(*pairs[draws.below(len(pairs))])

    # Every repair removes one link and adds two, consuming two free ports, so this terminates.
    while open_nodes:
        # Nodes needing two ports go first; single free ports then come in pairs (nr*k is even).
        u = max(open_nodes, key=lambda w: (free[w], -w))
        existing = [(a, b) for a in range(nr) for b in adj[a] if a < b]
        order = rng.permutation(len(existing)).tolist()
        if free[u] >= 2:
            pick = next(
                (
                    existing[i]
                    for i in order
                    if u not in existing[i]
                    and existing[i][0] not in adj[u]
                    and existing[i][1] not in adj[u]
                ),
                None,
            )
            if pick is None:
                return None
            x, y = pick
            unlink(x, y)
            link(u, x)
            link(u, y)
        else:
            others = [w for w in open_nodes if w != u]
            if not others:
                return None
            v = min(others)
            if v not in adj[u]:
                link(u, v)
                continue
            choice: tuple[int, int] | None = None
            for i in order:
                for x, y in (existing[i], existing[i][::-1]):
                    if x != u and x not in adj[u] and y != v and y not in adj[v]:
                        choice = (x, y)
                        break
                if choice is not None:
                    break
            if choice is None:
                return None
            x, y = choice
            unlink(x, y)
            link(u, x)
            link(v, y)

    edges = [(a, b) for a in range(nr) for b in sorted(adj[a]) if a < b]
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    nr = require_range(params, "nr", minimum=3)
    require_size("nr", nr)
    k = require_range(params, "k", minimum=2, maximum=nr - 1, hint=f"2 <= k <= nr-1 = {nr - 1}")
    if nr * k % 2:
        raise TopologyParameterError(
            "k", f"nr*k = {nr}*{k} is odd, so no {k}-regular graph exists", "nr*k even"
        )
    p = host_count(params, "p", k // 2)

    rng = np.random.default_rng(seed)
    edges: IntArray | None = None
    for _ in range(MAX_ATTEMPTS):
        candidate = _random_regular(nr, k, rng)
        if candidate is not None and is_connected(nr, candidate):
            edges = candidate
            break
    if edges is None:
        raise TopologyParameterError(
            "k",
            f"no connected {k}-regular graph on {nr} switches found in {MAX_ATTEMPTS} attempts",
            "a larger k (k >= 3 makes random regular graphs connected almost surely)",
        )
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    check_invariants("jellyfish", edges, nr, expected_edges=nr * k // 2, degrees=k)
    return GeneratedTopology(
        kind="jellyfish",
        params={"nr": nr, "k": k, "p": p},
        switch_names=[f"jf-{i}" for i in range(nr)],
        switch_roles=["switch"] * nr,
        edges=edge_list(edges),
        hosts_per_switch=[p] * nr,
    )
