"""Complete graph: the diameter-1 lower bound and a validation case."""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    ParameterSpec,
    check_invariants,
    edge_list,
    host_count,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec("k", int, True, None, "network radix k'; Nr = k'+1 switches"),
    ParameterSpec("p", int, False, None, "hosts per switch (default k')"),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    k = require_range(params, "k", minimum=1)
    num = k + 1
    require_size("k", num)
    p = host_count(params, "p", k)
    iu, ju = np.triu_indices(num, k=1)
    edges = np.stack([iu, ju], axis=1).astype(np.int64)
    check_invariants("clique", edges, num, expected_edges=num * k // 2, degrees=k)
    return GeneratedTopology(
        kind="clique",
        params={"k": k, "p": p},
        switch_names=[f"cl-{i}" for i in range(num)],
        switch_roles=["switch"] * num,
        edges=edge_list(edges),
        hosts_per_switch=[p] * num,
    )
