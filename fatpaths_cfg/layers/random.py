"""Random edge sampling: every sparse layer keeps each link with probability rho."""

from __future__ import annotations

import numpy as np

from fatpaths_cfg.inventory.schema import RoutingSpec
from fatpaths_cfg.layers import LayerError, is_connected


def random_layers(
    nr: int, edges: np.ndarray, count: int, rng: np.random.Generator, spec: RoutingSpec
) -> list[np.ndarray]:
    return [rng.random(len(edges)) < spec.rho for _ in range(count)]


def resample_until_connected(
    nr: int,
    edges: np.ndarray,
    first: np.ndarray,
    number: int,
    spec: RoutingSpec,
    rng: np.random.Generator,
) -> tuple[np.ndarray, int]:
    mask = first
    for attempt in range(1, spec.max_resamples + 1):
        if is_connected(nr, edges, mask):
            return mask, attempt
        mask = rng.random(len(edges)) < spec.rho
    suggestion = min(1.0, round(spec.rho + 0.2, 2))
    raise LayerError(
        f"layer {number} stayed disconnected in {spec.max_resamples} samples at rho={spec.rho}",
        f"raise routing.rho (e.g. to {suggestion}) so that a sampled layer keeps every switch "
        "reachable",
    )
