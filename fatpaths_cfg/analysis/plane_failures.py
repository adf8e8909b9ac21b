"""Hop count of parallel dataplanes under random link failures (P-Net, CoNEXT'22, 5.4).

A rack pair's hop count is its shortest switch-to-switch path over the planes that survive:
a host takes the plane with the fewest hops, and a packet never changes plane. Failed links are
drawn uniformly from all links of all planes, so a serial fabric and four planes lose the same
share of their links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fatpaths_cfg.analysis.plane_set import PlaneSet, hop_matrix


@dataclass(frozen=True)
class FailurePoint:
    share: float  # of all links failed
    mean_hops: float  # over ordered rack pairs that can still reach each other, mean of trials
    unreachable: float  # share of ordered rack pairs with no path left, mean of trials
    trials: int


def best_plane_hops(planes: PlaneSet, alive: Sequence[np.ndarray]) -> np.ndarray:
    """[s, t] hops over the best surviving plane; inf where every plane is cut."""
    best = np.full((planes.racks, planes.racks), np.inf)
    for plane, edges in enumerate(planes.edges):
        hops = hop_matrix(planes.switches, edges[alive[plane]])
        np.minimum(best, hops[: planes.racks, : planes.racks], out=best)
    return best


def _failed_masks(planes: PlaneSet, order: np.ndarray, failed: int) -> list[np.ndarray]:
    """Alive-link masks per plane when the first `failed` links of `order` (an ordering of all
    links, numbered plane after plane) are down."""
    sizes = [len(e) for e in planes.edges]
    down = np.zeros(sum(sizes), dtype=bool)
    down[order[:failed]] = True
    masks, start = [], 0
    for size in sizes:
        masks.append(~down[start : start + size])
        start += size
    return masks


def hops_under_failures(
    planes: PlaneSet, shares: Sequence[float], trials: int, seed: int
) -> list[FailurePoint]:
    """Mean best-plane hop count per share of failed links. Each trial draws one random order of
    all links and fails a prefix of it, so a larger share fails a superset of a smaller one and
    curves do not wiggle from resampling."""
    total = sum(len(e) for e in planes.edges)
    off_diagonal = ~np.eye(planes.racks, dtype=bool)
    hops = np.zeros((len(shares), trials))
    lost = np.zeros((len(shares), trials))
    for trial in range(trials):
        order = np.random.default_rng([seed, trial, 0xFA11]).permutation(total)
        for i, share in enumerate(shares):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"failure share {share} is outside [0, 1]")
            best = best_plane_hops(planes, _failed_masks(planes, order, round(share * total)))
            pairs = best[off_diagonal]
            reachable = np.isfinite(pairs)
            hops[i, trial] = float(pairs[reachable].mean()) if reachable.any() else np.nan
            lost[i, trial] = 1.0 - float(reachable.mean())
    return [
        FailurePoint(float(share), float(np.nanmean(hops[i])), float(lost[i].mean()), trials)
        for i, share in enumerate(shares)
    ]
