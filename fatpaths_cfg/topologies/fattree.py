"""Three-stage fat tree (k-ary folded Clos) with optional oversubscription at the edge."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    ParameterSpec,
    TopologyParameterError,
    check_invariants,
    check_names,
    edge_list,
    finalize_edges,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec("k", int, True, None, "switch port count (even); 5k^2/4 switches"),
    ParameterSpec(
        "oversubscription",
        int,
        False,
        1,
        "edge oversubscription o: each edge switch keeps k/2 uplinks and serves o*k/2 hosts",
    ),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    k = require_range(params, "k", minimum=2)
    if k % 2:
        raise TopologyParameterError(
            "k", f"k={k} is odd", f"an even port count such as {k - 1} or {k + 1}"
        )
    over = require_range(params, "oversubscription", minimum=1)
    half = k // 2
    n_edge = k * half
    n_agg = k * half
    n_core = half * half
    num = n_edge + n_agg + n_core
    require_size("k", num)
    # Oversubscription keeps the switch fabric (and its cost) of the k-ary tree and adds hosts
    # to each edge switch, rather than removing uplinks: the fabric stays identical across o,
    # which is what a comparison against oversubscribed trees of similar cost needs. Edge switches
    # then use (o+1)*k/2 ports.

    pods = np.arange(k, dtype=np.int64)
    pos = np.arange(half, dtype=np.int64)
    # Edge (pod, i) -> every aggregation switch (pod, j) of its pod.
    pod_b, ei_b, aj_b = np.meshgrid(pods, pos, pos, indexing="ij")
    edge_u = (pod_b * half + ei_b).reshape(-1)
    edge_v = (n_edge + pod_b * half + aj_b).reshape(-1)
    # Aggregation (pod, j) -> core switches j*k/2 .. j*k/2 + k/2 - 1 (core group j).
    pod_c, aj_c, m_c = np.meshgrid(pods, pos, pos, indexing="ij")
    agg_u = (n_edge + pod_c * half + aj_c).reshape(-1)
    agg_v = (n_edge + n_agg + aj_c * half + m_c).reshape(-1)
    edges = finalize_edges(np.concatenate([edge_u, agg_u]), np.concatenate([edge_v, agg_v]), num)
    degrees = np.concatenate([np.full(n_edge, half), np.full(n_agg, k), np.full(n_core, k)]).astype(
        np.int64
    )
    check_invariants("fattree", edges, num, expected_edges=k**3 // 2, degrees=degrees)

    names = [f"ft-edge-{pod}-{i}" for pod in range(k) for i in range(half)]
    names += [f"ft-agg-{pod}-{j}" for pod in range(k) for j in range(half)]
    names += [f"ft-core-{c}" for c in range(n_core)]
    check_names(names)
    roles = ["edge"] * n_edge + ["aggregation"] * n_agg + ["core"] * n_core
    return GeneratedTopology(
        kind="fattree",
        params={"k": k, "oversubscription": over},
        switch_names=names,
        switch_roles=roles,
        edges=edge_list(edges),
        hosts_per_switch=[over * half] * n_edge + [0] * (n_agg + n_core),
    )
