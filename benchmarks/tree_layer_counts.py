"""How many layers SPAIN and PAST need: the number of loop-free layers (forests) their
constructions make before the compiler keeps the first `routing.layers - 1` of them.

A compile keeps only the layers it was asked for, so neither `compile` nor `analyze` prints
this count. This script builds each inventory's fabric as `compile` does, runs the algorithm's
plan on the compiler's own random stream (`fatpaths_cfg.layers.layer_rng`), checks that the
layers it keeps are exactly those `build_layers` gives (so the count is that compile's), and
prints one line per inventory and algorithm:

    python benchmarks/tree_layer_counts.py [INVENTORY ...] [--layers 9]

Default: inventories/slimfly-q5.yaml and inventories/slimfly-q7-9layers.yaml at their own
`routing.seed`, 1 full + 8 sparse layers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from fatpaths_cfg.fabric import build_fabric
from fatpaths_cfg.inventory.load import load_inventory
from fatpaths_cfg.layers import build_layers, layer_rng
from fatpaths_cfg.layers.baselines import plan_past_layers, plan_spain_layers

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INVENTORIES = (
    ROOT / "inventories" / "slimfly-q5.yaml",
    ROOT / "inventories" / "slimfly-q7-9layers.yaml",
)
PLANS = {"spain": plan_spain_layers, "past": plan_past_layers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inventories", nargs="*", type=Path, default=list(DEFAULT_INVENTORIES))
    parser.add_argument("--layers", type=int, default=9, help="routing.layers (1 full + n-1)")
    args = parser.parse_args(argv)
    if args.layers < 2:
        parser.error("--layers must be at least 2 (one full layer and a sparse one)")
    for path in args.inventories:
        loaded = load_inventory(path)
        fabric = build_fabric(loaded)
        if len(np.unique(fabric.plane_of_switch)) > 1:
            print(f"{path.name}: has planes; each plane draws its own layers, not counted here")
            return 2
        for algorithm, plan in PLANS.items():
            started = time.process_time()
            spec = loaded.spec.routing.model_copy(
                update={"algorithm": algorithm, "layers": args.layers}
            )
            seed = spec.seed
            trees = plan(fabric.nr, fabric.edges, args.layers - 1, layer_rng(seed), spec)
            compiled = build_layers(
                fabric.nr, fabric.edges, spec, seed, fabric.link_keys, fabric.switch_keys
            )
            # The same stream, so the kept layers must be the compile's: otherwise the count
            # would be of some other draw.
            for kept, layer in zip(trees.masks, compiled[1:], strict=True):
                if not np.array_equal(kept, layer.links):
                    print(f"{path.name} {algorithm}: layer {layer.number} differs from compile's")
                    return 1
            sizes = [int(m.sum()) for m in trees.masks]
            print(
                f"{path.name}: Nr = {fabric.nr}, {len(fabric.edges)} links, seed {seed}; "
                f"{algorithm}: {min(sizes)}..{max(sizes)} links per sparse layer, "
                f"the construction needs {trees.needed} layers "
                f"({time.process_time() - started:.1f} CPU-s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
