"""Xpander: a seeded random l-lift of the complete graph K_(k'+1)."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    IntArray,
    ParameterSpec,
    TopologyParameterError,
    check_invariants,
    check_names,
    edge_list,
    finalize_edges,
    host_count,
    is_connected,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec("k", int, True, None, "network radix k'; lifts K_(k'+1)"),
    ParameterSpec("l", int, True, None, "lift size: copies per base vertex; Nr = (k'+1)*l"),
    ParameterSpec("p", int, False, None, "hosts per switch (default floor(k'/2))"),
)

MAX_ATTEMPTS = 50


def _random_lift(k: int, lift: int, rng: np.random.Generator) -> IntArray:
    base_u, base_v = np.triu_indices(k + 1, k=1)
    copies = np.arange(lift, dtype=np.int64)
    # One independent random permutation (perfect matching between copies) per base edge.
    perms = rng.permuted(np.tile(copies, (len(base_u), 1)), axis=1)
    u = base_u[:, None] * lift + copies[None, :]
    v = base_v[:, None] * lift + perms
    # Distinct base edges join distinct copy blocks, so the lift never has parallel edges.
    return finalize_edges(u, v, (k + 1) * lift)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    k = require_range(params, "k", minimum=2)
    lift = require_range(params, "l", minimum=1)
    num = (k + 1) * lift
    require_size("l", num)
    p = host_count(params, "p", k // 2)

    rng = np.random.default_rng(seed)
    edges: IntArray | None = None
    for _ in range(MAX_ATTEMPTS):
        candidate = _random_lift(k, lift, rng)
        if is_connected(num, candidate):
            edges = candidate
            break
    if edges is None:
        raise TopologyParameterError(
            "k",
            f"no connected {lift}-lift of K_{k + 1} found in {MAX_ATTEMPTS} attempts",
            "a larger k (k >= 3 makes random lifts connected almost surely)",
        )
    check_invariants("xpander", edges, num, expected_edges=num * k // 2, degrees=k)
    names = [f"xp-{v}-{c}" for v in range(k + 1) for c in range(lift)]
    check_names(names)
    return GeneratedTopology(
        kind="xpander",
        params={"k": k, "l": lift, "p": p},
        switch_names=names,
        switch_roles=["switch"] * num,
        edges=edge_list(edges),
        hosts_per_switch=[p] * num,
    )
