"""Regular HyperX: an S^L Hamming graph, a clique along every one-dimensional row."""

from __future__ import annotations

import numpy as np

from .base import (
    MAX_SWITCHES,
    GeneratedTopology,
    IntArray,
    ParameterSpec,
    TopologyParameterError,
    check_invariants,
    check_names,
    edge_list,
    finalize_edges,
    host_count,
    require_range,
)

PARAMETERS = (
    ParameterSpec("L", int, True, None, "number of dimensions; diameter L"),
    ParameterSpec("S", int, True, None, "switches per dimension; Nr = S^L"),
    ParameterSpec("p", int, False, None, "hosts per switch (default k'/L = S-1)"),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    dims = require_range(params, "L", minimum=1)
    size = require_range(params, "S", minimum=2)
    # Checked before S**L is formed so a huge L cannot allocate anything.
    if dims * (size - 1).bit_length() > 64 or size**dims > MAX_SWITCHES:
        raise TopologyParameterError(
            "L", f"S^L = {size}^{dims} switches is too large", f"S^L <= {MAX_SWITCHES}"
        )
    num = size**dims
    k_net = dims * (size - 1)
    p = host_count(params, "p", size - 1)

    nodes = np.arange(num, dtype=np.int64)
    us: list[IntArray] = []
    vs: list[IntArray] = []
    for d in range(dims):
        stride = size**d
        coord = (nodes // stride) % size
        for delta in range(1, size):
            keep = coord + delta < size
            us.append(nodes[keep])
            vs.append(nodes[keep] + delta * stride)
    edges = finalize_edges(np.concatenate(us), np.concatenate(vs), num)
    check_invariants("hyperx", edges, num, expected_edges=num * k_net // 2, degrees=k_net)

    # Most significant dimension first, so names sort like the switch indices.
    names = [
        "hx-" + "-".join(str((i // size**d) % size) for d in reversed(range(dims)))
        for i in range(num)
    ]
    check_names(names)
    return GeneratedTopology(
        kind="hyperx",
        params={"L": dims, "S": size, "p": p},
        switch_names=names,
        switch_roles=["switch"] * num,
        edges=edge_list(edges),
        hosts_per_switch=[p] * num,
    )
