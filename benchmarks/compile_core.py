"""Compiler-core speed and memory: layers + forwarding + output for large Slim Flies.

Targets (issue 2): Slim Fly q=19, 9 layers, rho 0.6, random: <= 3 s; q=37 <= 30 s and
<= 2 GB peak; overlap on q=19 <= 30 s. The baseline in the same run is a plain networkx
implementation of the forwarding step on q=13, against which the speed-up is printed.

Each case runs in a fresh subprocess so that peak memory (ru_maxrss) is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "q19-random": (
        {"kind": "slimfly", "q": 19},
        {"layers": 9, "rho": 0.6, "algorithm": "random"},
        3.0,
        None,
    ),
    "q37-random": (
        {"kind": "slimfly", "q": 37},
        {"layers": 9, "rho": 0.6, "algorithm": "random"},
        30.0,
        2048.0,
    ),
    "q19-overlap": (
        {"kind": "slimfly", "q": 19},
        {"layers": 9, "rho": 0.6, "algorithm": "overlap"},
        30.0,
        None,
    ),
}


def run_case(name: str) -> dict[str, float | str]:
    import yaml

    from fatpaths_cfg import api

    generate, routing, _, _ = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        inventory = Path(tmp) / "inv.yaml"
        inventory.write_text(
            yaml.safe_dump(
                {"fabric": name, "generate": generate, "routing": {**routing, "seed": 1}}
            )
        )
        from fatpaths_cfg.fabric import build_fabric
        from fatpaths_cfg.inventory.load import load_inventory

        start = time.perf_counter()
        fabric = build_fabric(load_inventory(inventory))
        loaded_s = time.perf_counter() - start
        start = time.perf_counter()
        compiled = api.compile_fabric(inventory)
        # Core files only: benchmarks/render_slimfly.py measures the per-platform configs.
        tree = api.model_output(compiled)
        tree.commit(Path(tmp) / "out")
        total_s = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "case": name,
        "switches": fabric.nr,
        "hosts": len(fabric.hosts),
        "inventory_s": round(loaded_s, 2),
        # compile_fabric loads the inventory again; what the target covers is the rest
        "layers_forwarding_output_s": round(total_s - loaded_s, 2),
        "total_s": round(total_s, 2),
        "peak_mb": round(peak_mb, 1),
        "bytes": tree.total_bytes,
    }


def networkx_baseline() -> dict[str, float]:
    """Forwarding for all layers of Slim Fly q=13 the plain way, next to the native path."""
    import networkx as nx
    import numpy as np

    from fatpaths_cfg.inventory.schema import RoutingSpec
    from fatpaths_cfg.layers import build_layers
    from fatpaths_cfg.routing import compute_routing
    from fatpaths_cfg.topologies import generate

    topo = generate("slimfly", {"q": 13}, 1)
    nr = len(topo.switch_names)
    edges = np.array(topo.edges, dtype=np.int32)
    layers = build_layers(nr, edges, RoutingSpec(layers=9, rho=0.6), 1)
    start = time.perf_counter()
    for layer in layers:
        graph = nx.Graph()
        graph.add_nodes_from(range(nr))
        graph.add_edges_from(edges[layer.links].tolist())
        next_hop = np.full((nr, nr), -1, dtype=np.int32)
        for t in range(nr):
            dist = nx.single_source_shortest_path_length(graph, t)
            for s in range(nr):
                if s != t:
                    next_hop[s, t] = min(n for n in graph[s] if dist[n] == dist[s] - 1)
    networkx_s = time.perf_counter() - start
    start = time.perf_counter()
    compute_routing(nr, edges, layers, 1)
    native_s = time.perf_counter() - start
    return {
        "networkx_s": round(networkx_s, 2),
        "native_s": round(native_s, 4),
        "speedup": round(networkx_s / native_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    print(
        f"{'case':<12} {'Nr':>5} {'hosts':>6} {'inventory s':>11} {'layers+fwd+out s':>16} "
        f"{'peak MB':>8} {'target s':>8} {'target MB':>9}  verdict"
    )
    for name, (_, _, target_s, target_mb) in CASES.items():
        proc = subprocess.run(
            [sys.executable, __file__, "--case", name], capture_output=True, text=True, check=True
        )
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ok = r["layers_forwarding_output_s"] <= target_s and (
            target_mb is None or r["peak_mb"] <= target_mb
        )
        print(
            f"{name:<12} {r['switches']:>5} {r['hosts']:>6} {r['inventory_s']:>11} "
            f"{r['layers_forwarding_output_s']:>16} {r['peak_mb']:>8} {target_s:>8} "
            f"{target_mb or '-':>9}  {'PASS' if ok else 'FAIL'} (total {r['total_s']} s)"
        )
    if not args.skip_baseline:
        base = networkx_baseline()
        print(
            f"forwarding step, Slim Fly q=13, 9 layers: networkx {base['networkx_s']} s, "
            f"native {base['native_s']} s, speed-up x{base['speedup']}"
        )


if __name__ == "__main__":
    main()
