"""Closed-form-checkable figures of a fabric: Nr, N, k', p, diameter, mean path length."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.routing import UNREACHABLE, hop_distances


def topology_stats(fabric: Fabric) -> dict[str, Any]:
    """The figures of a fabric; with parallel planes, path figures count pairs within a plane
    and a `planes` entry adds host-pair hop counts per plane and for the best plane."""
    nr = fabric.nr
    edges = fabric.edges
    dist = hop_distances(nr, edges)
    plane_of = fabric.plane_of_switch
    off = ~np.eye(nr, dtype=bool) & (plane_of[:, None] == plane_of[None, :])
    d = dist[off]
    connected = bool((d != UNREACHABLE).all())
    degrees = np.bincount(edges.ravel(), minlength=nr)
    hosts = np.array([len(h) for h in fabric.hosts_of_switch])
    with_hosts = hosts[hosts > 0]
    p = Counter(with_hosts.tolist()).most_common(1)[0][0] if len(with_hosts) else 0
    planes = {"planes": plane_hop_stats(fabric, dist)} if fabric.planes > 1 else {}
    return {
        "switches (Nr)": nr,
        "hosts (N)": len(fabric.hosts),
        "network radix k' (max)": int(degrees.max()) if nr else 0,
        "network radix k' (min)": int(degrees.min()) if nr else 0,
        "hosts per switch p (most common)": int(p),
        "switches with hosts": int((hosts > 0).sum()),
        "links": len(fabric.links),
        "diameter": int(d.max()) if connected and len(d) else None,
        "mean path length": round(float(d.mean()), 4) if connected and len(d) else None,
        **planes,
    }


def host_pair_hops(fabric: Fabric, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([plane, pair] switch hops, pair weights) over unordered pairs of distinct hosts.

    Hosts cabled to the same switch in every plane are one class, so the work grows with the
    racks, not with the square of the hosts; a pair of classes weighs the host pairs it stands
    for.
    """
    classes = Counter(tuple(u.switch for u in h.uplinks) for h in fabric.hosts)
    switches = np.array(list(classes), dtype=np.int64).reshape(len(classes), fabric.planes)
    members = np.array(list(classes.values()), dtype=np.float64)
    upper = np.triu(np.ones((len(classes), len(classes)), dtype=bool))
    weights = np.outer(members, members)
    np.fill_diagonal(weights, members * (members - 1) / 2)
    hops = np.stack(
        [dist[np.ix_(switches[:, p], switches[:, p])][upper] for p in range(fabric.planes)]
    )
    return hops.astype(np.int64), weights[upper]


def plane_hop_stats(fabric: Fabric, dist: np.ndarray) -> dict[str, Any]:
    """Hop-count distribution of host pairs in every plane and in the best plane per pair
    (the one low-latency traffic takes)."""
    hops, weights = host_pair_hops(fabric, dist)
    rows = {f"plane {p}": _hop_figures(hops[p], weights) for p in range(fabric.planes)}
    rows["best of planes"] = _hop_figures(hops.min(axis=0), weights)
    return rows


def _hop_figures(hops: np.ndarray, weights: np.ndarray) -> dict[str, Any]:
    histogram = np.bincount(hops, weights=weights) if len(hops) else np.zeros(0)
    total = float(weights.sum())
    return {
        "host pairs by switch hops": {str(k): int(v) for k, v in enumerate(histogram) if v},
        "mean": round(float((hops * weights).sum() / total), 4) if total else None,
        "max": int(hops[weights > 0].max()) if total else None,
    }
