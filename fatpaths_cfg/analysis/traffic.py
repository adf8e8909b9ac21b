"""Switch-level demand matrices for the traffic patterns (`fatpaths_cfg.traffic_patterns`,
the same patterns the simulator runs)."""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import shortest_path

from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.traffic_patterns import (
    ALIASES,
    PATTERNS,
    UNREACHABLE,
    PatternError,
    PatternSite,
    canonical,
    pattern_peers,
)

__all__ = ["ALIASES", "PATTERNS", "PatternError", "canonical", "host_pairs", "switch_demand"]


def pattern_site(fabric: Fabric) -> PatternSite:
    hops = shortest_path(fabric.adjacency, directed=False, unweighted=True)
    dist = np.where(np.isfinite(hops), hops, UNREACHABLE).astype(np.uint8)
    generator = fabric.origin.get("generate")
    return PatternSite(
        host_switch=np.array([h.switch for h in fabric.hosts], dtype=np.int64),
        dist=dist,
        generator=generator if isinstance(generator, dict) else None,
    )


def host_pairs(
    fabric: Fabric, pattern: str, rng: np.random.Generator, offset: int | None = None
) -> np.ndarray:
    """(F, 2) host-index pairs; `uniform` and `all-to-all` give every ordered pair once."""
    n = len(fabric.hosts)
    if canonical(pattern) == "uniform":
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        return np.stack([src, dst], axis=1)
    peers = pattern_peers(pattern_site(fabric), pattern, rng, offset=offset)
    src = np.concatenate([np.full(len(p), h, dtype=np.int64) for h, p in enumerate(peers)])
    dst = np.concatenate([np.asarray(p, dtype=np.int64) for p in peers])
    return np.stack([src, dst], axis=1)


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
