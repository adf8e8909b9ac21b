"""Closed-form-checkable figures of a fabric: Nr, N, k', p, diameter, mean path length."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from fatpaths_cfg import _native
from fatpaths_cfg.fabric import Fabric
from fatpaths_cfg.routing import UNREACHABLE


def topology_stats(fabric: Fabric) -> dict[str, Any]:
    nr = fabric.nr
    edges = fabric.edges
    dist, _ = _native.layer_forwarding(
        nr, np.ascontiguousarray(edges[:, 0]), np.ascontiguousarray(edges[:, 1]), 0, None
    )
    off = ~np.eye(nr, dtype=bool)
    d = dist[off]
    connected = bool((d != UNREACHABLE).all())
    degrees = np.bincount(edges.ravel(), minlength=nr)
    hosts = np.array([len(h) for h in fabric.hosts_of_switch])
    with_hosts = hosts[hosts > 0]
    p = Counter(with_hosts.tolist()).most_common(1)[0][0] if len(with_hosts) else 0
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
    }
