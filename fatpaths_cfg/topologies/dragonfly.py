"""Dragonfly with complete-graph groups and one global link per pair of groups."""

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
    ParameterSpec("p", int, False, 2, "hosts per switch"),
    ParameterSpec("a", int, False, None, "switches per group (default 2p)"),
    ParameterSpec("h", int, False, None, "global links per switch (default p)"),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    p = require_range(params, "p", minimum=1)
    if params.get("a") is None:
        params["a"] = 2 * p
    if params.get("h") is None:
        params["h"] = p
    a = require_range(params, "a", minimum=1)
    h = require_range(params, "h", minimum=1)
    # Unbalanced (a, h, p) is allowed: only the balanced choice a = 2p = 2h is the default.
    g = a * h + 1
    num = a * g
    require_size("a", num)

    # Intra-group complete graphs.
    iu, ju = np.triu_indices(a, k=1)
    groups = np.arange(g, dtype=np.int64)[:, None] * a
    local_u = (groups + iu[None, :]).reshape(-1)
    local_v = (groups + ju[None, :]).reshape(-1)

    # Consecutive (absolute) arrangement: group i numbers its a*h global ports j = s*h + t
    # (switch s, its t-th global port) and connects port j to group j if j < i, else j + 1,
    # i.e. to the other groups in increasing order skipping itself. Seen from group t > i, the
    # port toward i is port i, so each pair (i, t), i < t, is one link between
    # switch (i, (t-1) // h) and switch (t, i // h).
    gi, gt = np.triu_indices(g, k=1)
    global_u = gi * a + (gt - 1) // h
    global_v = gt * a + gi // h

    edges = finalize_edges(
        np.concatenate([local_u, global_u]), np.concatenate([local_v, global_v]), num
    )
    k_net = a - 1 + h
    check_invariants(
        "dragonfly",
        edges,
        num,
        expected_edges=g * a * (a - 1) // 2 + g * (g - 1) // 2,
        degrees=k_net,
    )
    names = [f"df-g{i}-s{s}" for i in range(g) for s in range(a)]
    check_names(names)
    return GeneratedTopology(
        kind="dragonfly",
        params={"p": p, "a": a, "h": h},
        switch_names=names,
        switch_roles=["switch"] * num,
        edges=edge_list(edges),
        hosts_per_switch=[p] * num,
    )
