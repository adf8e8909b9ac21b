"""Two-level Clos(n, r, m), folded: r leaf switches (input and output switch in one) with n
hosts each, m middle switches, every leaf linked once to every middle switch.

This is the network of the adaptive-routing convergence study (docs: Clos convergence): it is
rearrangeably non-blocking for flows at 1/p of the link rate when m * p >= n.
"""

from __future__ import annotations

import numpy as np

from .base import (
    GeneratedTopology,
    ParameterSpec,
    check_invariants,
    edge_list,
    require_range,
    require_size,
)

PARAMETERS = (
    ParameterSpec("n", int, True, None, "hosts per leaf (input/output) switch"),
    ParameterSpec("r", int, True, None, "leaf switches (input = output switches)"),
    ParameterSpec("m", int, False, None, "middle switches (default n: rearrangeable)"),
)


def build(params: dict[str, int | float], seed: int) -> GeneratedTopology:
    del seed  # deterministic construction
    n = require_range(params, "n", minimum=1)
    r = require_range(params, "r", minimum=2)
    if params.get("m") is None:
        params["m"] = n
    m = require_range(params, "m", minimum=1)
    require_size("r", r + m)
    leaves = np.repeat(np.arange(r, dtype=np.int64), m)
    middles = r + np.tile(np.arange(m, dtype=np.int64), r)
    edges = np.stack([leaves, middles], axis=1)
    degrees = np.array([m] * r + [r] * m, dtype=np.int64)
    check_invariants("clos", edges, r + m, expected_edges=r * m, degrees=degrees)
    return GeneratedTopology(
        kind="clos",
        params={"n": n, "r": r, "m": m},
        switch_names=[f"leaf-{i}" for i in range(r)] + [f"middle-{j}" for j in range(m)],
        switch_roles=["leaf"] * r + ["middle"] * m,
        edges=edge_list(edges),
        hosts_per_switch=[n] * r + [0] * m,
    )


def dmodk_middle(destination_host: int, m: int) -> int:
    """D-Mod-K static up-port routing: the middle switch a leaf uses towards a host.

    Consecutive hosts of a leaf spread over consecutive middles, so a permutation that keeps
    each leaf's destinations on one leaf is routed without contention; other permutations may
    stack several flows on one middle-to-leaf link.
    """
    return destination_host % m
