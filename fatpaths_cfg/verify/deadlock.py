"""Deadlock analysis: channel dependency graphs (CDG) of destination-based layer routing.

A channel is a directed link. A route that enters switch v over channel (u->v) and leaves over
(v->w) makes (u->v) wait on (v->w). Under PFC (lossless) a cycle of such waits can deadlock;
a layer whose CDG is acyclic cannot.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


def _channel_ids(nr: int, tail: np.ndarray, head: np.ndarray) -> np.ndarray:
    return tail.astype(np.int64) * nr + head.astype(np.int64)


def dependency_edges(
    next_hop: np.ndarray, dist: np.ndarray | None = None, neighbours: list[np.ndarray] | None = None
) -> np.ndarray:
    """Unique (channel, channel) dependencies of one layer as an (M, 2) int64 array.

    With `dist` and `neighbours`, every equal-cost next hop counts (ECMP); otherwise only the
    chosen next hop of `next_hop[s, t]`.
    """
    nr = next_hop.shape[0]
    if dist is None or neighbours is None:
        first = next_hop  # s -> n
        valid = first >= 0
        s_idx, t_idx = np.nonzero(valid)
        n_idx = first[s_idx, t_idx]
        m_idx = next_hop[n_idx, t_idx]
        keep = m_idx >= 0
        a = _channel_ids(nr, s_idx[keep], n_idx[keep])
        b = _channel_ids(nr, n_idx[keep], m_idx[keep])
        return np.unique(np.stack([a, b], axis=1), axis=0) if len(a) else np.zeros((0, 2), np.int64)
    pairs: list[np.ndarray] = []
    d = dist.astype(np.int16)
    for v in range(nr):
        nbrs = neighbours[v]
        if len(nbrs) == 0:
            continue
        # into v from u (d[u,t] = d[v,t] + 1) and out of v to w (d[w,t] = d[v,t] - 1)
        into = d[nbrs] == d[v][None, :] + 1
        out = d[nbrs] == d[v][None, :] - 1
        both = into.astype(np.int32) @ out.T.astype(np.int32)
        ui, wi = np.nonzero(both)
        if len(ui):
            a = _channel_ids(nr, nbrs[ui], np.full(len(ui), v))
            b = _channel_ids(nr, np.full(len(wi), v), nbrs[wi])
            pairs.append(np.stack([a, b], axis=1))
    if not pairs:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(pairs), axis=0)


def is_acyclic(dependencies: np.ndarray) -> bool:
    """True when the dependency graph has no cycle (every strong component is one channel)."""
    if len(dependencies) == 0:
        return True
    channels, inverse = np.unique(dependencies.ravel(), return_inverse=True)
    inverse = inverse.reshape(-1, 2)
    size = len(channels)
    graph = sp.csr_matrix(
        (np.ones(len(inverse), dtype=np.int8), (inverse[:, 0], inverse[:, 1])), shape=(size, size)
    )
    components, _ = connected_components(graph, directed=True, connection="strong")
    return bool(components == size)
