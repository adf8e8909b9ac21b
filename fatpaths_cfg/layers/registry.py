"""Every layer algorithm the inventory may name, and what the compiler must know of each.

The schema's `routing.algorithm` choices and the JSON Schema's enum come from this table, so a
new algorithm is one entry here plus its builder module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class LayerAlgorithm:
    name: str
    module: str  # where its builder lives, imported only when the algorithm is used
    builder: str
    # How a layer that misses some switch pairs is made whole: random samples are drawn again
    # (a completed random layer would no longer be the sparsified subset the paper analyses);
    # structured algorithms keep their choice and add the fewest links that connect it.
    connects_by: Literal["resampling", "completion"]
    summary: str


LAYER_ALGORITHMS: dict[str, LayerAlgorithm] = {
    algorithm.name: algorithm
    for algorithm in (
        LayerAlgorithm(
            "random",
            "fatpaths_cfg.layers.random",
            "random_layers",
            "resampling",
            "each layer keeps every link with probability rho",
        ),
        LayerAlgorithm(
            "overlap",
            "fatpaths_cfg.layers.overlap",
            "overlap_layers",
            "completion",
            "paths chosen to minimise their overlap with the layers built so far",
        ),
        LayerAlgorithm(
            "spain",
            "fatpaths_cfg.layers.baselines",
            "spain_layers",
            "completion",
            "SPAIN baseline: per-destination trees merged into loop-free layers",
        ),
        LayerAlgorithm(
            "past",
            "fatpaths_cfg.layers.baselines",
            "past_layers",
            "completion",
            "PAST baseline: one spanning tree per destination switch and layer",
        ),
        LayerAlgorithm(
            "kshortest",
            "fatpaths_cfg.layers.baselines",
            "kshortest_layers",
            "completion",
            "k-shortest-paths baseline: paths_per_layer paths per pair",
        ),
    )
}
LAYER_ALGORITHM_NAMES: tuple[str, ...] = tuple(LAYER_ALGORITHMS)
