"""Switch-level demand matrices for the traffic patterns of the FatPaths evaluation."""

from __future__ import annotations

import numpy as np

from fatpaths_cfg.fabric import Fabric

PATTERNS = ("uniform", "permutation", "offdiagonal", "shuffle")


def host_pairs(fabric: Fabric, pattern: str, rng: np.random.Generator) -> np.ndarray:
    """(F, 2) host-index pairs; every host sends one flow (uniform: to every other host)."""
    n = len(fabric.hosts)
    hosts = np.arange(n)
    if pattern == "uniform":
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        return np.stack([src, dst], axis=1)
    if pattern == "permutation":
        # A random derangement: retry the (rare) permutations that fix a point.
        while True:
            perm = rng.permutation(n)
            if not (perm == hosts).any():
                return np.stack([hosts, perm], axis=1)
    if pattern == "offdiagonal":
        # t = (s + c) mod N with c = one switch's worth of hosts plus one, so that flows leave
        # their switch and land on a neighbouring block, the adversarial case for minimal routing.
        per_switch = max(len(h) for h in fabric.hosts_of_switch)
        return np.stack([hosts, (hosts + per_switch + 1) % n], axis=1)
    if pattern == "shuffle":
        bits = max(1, int(np.floor(np.log2(n))))
        size = 1 << bits
        src = hosts[:size]
        dst = ((src << 1) | (src >> (bits - 1))) & (size - 1)
        keep = src != dst
        return np.stack([src[keep], dst[keep]], axis=1)
    raise ValueError(f"unknown traffic pattern {pattern!r} (one of {', '.join(PATTERNS)})")


def switch_demand(fabric: Fabric, pairs: np.ndarray) -> dict[tuple[int, int], float]:
    """Aggregate host flows into switch-to-switch demand, in units of one host's rate.

    Each host splits its injection evenly over its flows, so a host never injects more than
    its NIC rate whatever the pattern.
    """
    host_switch = np.array([h.switch for h in fabric.hosts], dtype=np.int64)
    flows_per_host = np.bincount(pairs[:, 0], minlength=len(fabric.hosts))
    weight = 1.0 / flows_per_host[pairs[:, 0]]
    s = host_switch[pairs[:, 0]]
    t = host_switch[pairs[:, 1]]
    demand: dict[tuple[int, int], float] = {}
    for a, b, w in zip(s.tolist(), t.tolist(), weight.tolist(), strict=True):
        if a != b:
            demand[(a, b)] = demand.get((a, b), 0.0) + w
    return demand
