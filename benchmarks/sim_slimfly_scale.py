"""Benchmark: FatPaths at scale on the native packet simulator.

Slim Fly q=19 (722 switches, 10,830 hosts), 1 full + 8 random-sampled layers, NDP with
FatPaths layer choice, pFabric web-search flows arriving at lambda = 300 flows/s per host,
10 ms simulated. Target: <= 120 s wall and <= 4 GB peak memory.

    python benchmarks/sim_slimfly_scale.py [--out OUT] [--rho 0.6] [--duration-ms 10] [--gbps 10]

With `--out` the compiled fabric in OUT (fabric.json + routing.npz) is simulated instead of a
freshly sampled one.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

from fatpaths_cfg.sim import (
    SimConfig,
    SimNetwork,
    load_network,
    make_workload,
    network_from_edges,
    simulate,
)
from fatpaths_cfg.sim.network import sampled_layers

TARGET_WALL_SECONDS = 120.0
TARGET_PEAK_BYTES = 4 * 2**30


def slimfly_network(q: int, layers: int, rho: float, gbps: float, seed: int) -> SimNetwork:
    from fatpaths_cfg.topologies import generate

    topo = generate("slimfly", {"q": q}, seed)
    base = network_from_edges("sf", topo.num_switches, topo.edges, topo.hosts_per_switch)
    return network_from_edges(
        f"slimfly-q{q}",
        topo.num_switches,
        topo.edges,
        topo.hosts_per_switch,
        link_gbps=gbps,
        seed=seed,
        extra_layers=sampled_layers(base, layers - 1, rho, seed),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="compiled output directory to simulate instead")
    parser.add_argument("--q", type=int, default=19)
    parser.add_argument("--layers", type=int, default=9)
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument("--gbps", type=float, default=10.0)
    parser.add_argument("--lambda", dest="rate", type=float, default=300.0)
    parser.add_argument("--duration-ms", type=float, default=10.0)
    parser.add_argument("--lb", default="fatpaths")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    if args.out:
        network = load_network(args.out)
    else:
        network = slimfly_network(args.q, args.layers, args.rho, args.gbps, args.seed)
    built = time.perf_counter()
    duration_ps = round(args.duration_ms * 1e9)
    workload = make_workload(
        network,
        "uniform",
        "websearch",
        seed=args.seed,
        arrival_rate=args.rate,
        duration_ps=duration_ps,
    )
    config = SimConfig(
        transport="ndp",
        load_balancing=args.lb,
        duration_us=args.duration_ms * 1000,
        seed=args.seed,
    )
    result = simulate(network, workload, config)
    total_wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    summary = result.summary()
    fct = summary["fct"]
    assert isinstance(fct, dict)
    c = result.counters
    figures = {
        "switches": network.n_switches,
        "hosts": network.n_hosts,
        "layers": network.n_layers,
        "flows": workload.n_flows,
        "flows_finished": int(result.finished.sum()),
        "network_build_seconds": round(built - started, 2),
        "simulation_wall_seconds": round(result.wall_seconds, 2),
        "simulation_cpu_seconds": round(result.cpu_seconds, 2),
        "total_wall_seconds": round(total_wall, 2),
        "events": c["events"],
        "events_per_cpu_second": round(c["events"] / result.cpu_seconds),
        "data_packets": c["data_packets_sent"],
        "trims": c["trims"],
        "layer_changes": c["layer_changes"],
        "peak_rss_mb": round(peak / 2**20, 1),
        "fct_mean_us": fct["mean_us"],
        "fct_median_us": fct["median_us"],
        "fct_p99_us": fct["p99_us"],
    }
    print(json.dumps(figures, indent=2))
    ok = total_wall <= TARGET_WALL_SECONDS and peak <= TARGET_PEAK_BYTES
    print(
        f"target: <= {TARGET_WALL_SECONDS:.0f} s wall and <= 4 GB peak memory: "
        f"{'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
