"""Every layer algorithm the inventory may name, and where the compiler finds its builder.

Here, below the layer builders, because the schema needs the names and the builders need the
schema: the table is what the inventory may say, the builders import it.

The schema's `routing.algorithm` choices and the JSON Schema's enum come from this table, so a
new algorithm is one entry here plus its builder module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LayerAlgorithm:
    name: str
    module: str  # where its builder lives, imported only when the algorithm is used
    builder: str
    summary: str


LAYER_ALGORITHMS: dict[str, LayerAlgorithm] = {
    algorithm.name: algorithm
    for algorithm in (
        LayerAlgorithm(
            "random",
            "fatpaths_cfg.layers.random",
            "random_layers",
            "each layer keeps every link with probability rho",
        ),
        LayerAlgorithm(
            "overlap",
            "fatpaths_cfg.layers.overlap",
            "overlap_layers",
            "paths chosen to minimise their overlap with the layers built so far",
        ),
        LayerAlgorithm(
            "spain",
            "fatpaths_cfg.layers.baselines",
            "spain_layers",
            "SPAIN baseline: per-destination trees merged into loop-free layers",
        ),
        LayerAlgorithm(
            "past",
            "fatpaths_cfg.layers.baselines",
            "past_layers",
            "PAST baseline: one spanning tree per destination switch and layer",
        ),
        LayerAlgorithm(
            "kshortest",
            "fatpaths_cfg.layers.baselines",
            "kshortest_layers",
            "k-shortest-paths baseline: paths_per_layer paths per pair",
        ),
    )
}
LAYER_ALGORITHM_NAMES: tuple[str, ...] = tuple(LAYER_ALGORITHMS)
