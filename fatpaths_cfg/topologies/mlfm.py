"""Multi-layer full mesh (MLFM) of Kathareios et al., SC'15."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    ParameterSpec,
    check_invariants,
    check_names,
    edge_list,
    finalize_edges,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec(
        "h", int, True, None, "h layers of h+1 local switches, h hosts each; Nr = 1.5 h(h+1)"
    ),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    h = require_range(params, "h", minimum=1)
    n_local = h * (h + 1)
    n_global = h * (h + 1) // 2
    num = n_local + n_global
    require_size("h", num)

    # Global switch index of unordered pair {a, b}, a < b, in lexicographic order.
    pair_a, pair_b = np.triu_indices(h + 1, k=1)
    pair_index = np.full((h + 1, h + 1), -1, dtype=np.int64)
    pair_index[pair_a, pair_b] = np.arange(n_global)
    pair_index[pair_b, pair_a] = np.arange(n_global)

    layers = np.arange(h, dtype=np.int64)
    # Local (layer, a) links to global {a, b} for every b != a: both ends of every pair, per layer.
    ends = np.concatenate([pair_a, pair_b])
    partners = np.concatenate([pair_b, pair_a])
    u = (layers[:, None] * (h + 1) + ends[None, :]).reshape(-1)
    v = np.broadcast_to(n_local + pair_index[ends, partners], (h, len(ends))).reshape(-1)
    edges = finalize_edges(u, v, num)
    degrees = np.concatenate([np.full(n_local, h), np.full(n_global, 2 * h)]).astype(np.int64)
    check_invariants("mlfm", edges, num, expected_edges=n_local * h, degrees=degrees)

    names = [f"mlfm-l{layer}-{a}" for layer in range(h) for a in range(h + 1)]
    names += [f"mlfm-g{a}-{b}" for a, b in zip(pair_a.tolist(), pair_b.tolist(), strict=True)]
    check_names(names)
    return GeneratedTopology(
        kind="mlfm",
        params={"h": h},
        switch_names=names,
        switch_roles=["local"] * n_local + ["global"] * n_global,
        edges=edge_list(edges),
        hosts_per_switch=[h] * n_local + [0] * n_global,
    )
