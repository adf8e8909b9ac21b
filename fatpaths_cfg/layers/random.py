"""Random edge sampling: every sparse layer keeps each link with probability rho."""

from __future__ import annotations

import numpy as np

from fatpaths_cfg.inventory.schema import RoutingSpec
from fatpaths_cfg.layers import layer_draws


def random_layers(
    nr: int,
    edges: np.ndarray,
    count: int,
    rng: np.random.Generator,
    spec: RoutingSpec,
    link_keys: np.ndarray,
) -> list[np.ndarray]:
    """Layer n keeps a cable iff a hash of (seed, n, the cable's name) falls below rho
    (`link_keys` are seeded, see `seeded_keys`): a
    cable's membership does not depend on any other cable, so adding or removing one changes
    no other link of any layer."""
    return [layer_draws(link_keys, number) < spec.rho for number in range(2, count + 2)]
