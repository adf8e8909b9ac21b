"""Paths as every analysis sees them: sampling switch pairs and counting link-disjoint paths
greedily (walking a layer's next hops is `fatpaths_cfg.compiled.paths`, shared with verify and
the lab).

One sampler and one greedy count, so that diversity, c_l, throughput and the plane analyses
agree on what "a sampled pair" means. The sampler takes its
generator from the caller, who draws it from a stream named after the choice
(`fatpaths_cfg.support.stable_hash.stream`), so the number of pairs asked for changes nothing else.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from fatpaths_cfg.compiled.paths import Path

Link = tuple[int, int]


def links_of(path: Path) -> set[Link]:
    """The undirected links of a path, each as (smaller end, larger end)."""
    return {(min(u, v), max(u, v)) for u, v in itertools.pairwise(path)}


def greedy_disjoint(paths: Iterable[Path]) -> int:
    """Pairwise link-disjoint paths picked shortest first (ties in path order) from a candidate
    set: a feasible packing, so a lower bound on the best one."""
    used: set[Link] = set()
    chosen = 0
    for path in sorted(set(paths), key=lambda p: (len(p), p)):
        links = links_of(path)
        if not links & used:
            used |= links
            chosen += 1
    return chosen


def sample_pairs(switches: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """(P, 2) ordered pairs of distinct members of `switches`: every pair when there are at most
    `count` of them, else `count` pairs drawn uniformly (with repetition)."""
    n = len(switches)
    if n * (n - 1) <= count:
        s, t = np.nonzero(~np.eye(n, dtype=bool))
    else:
        s = rng.integers(n, size=count)
        t = (s + rng.integers(1, n, size=count)) % n
    return np.stack([switches[s], switches[t]], axis=1).astype(np.int64)
