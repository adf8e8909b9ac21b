"""Benchmark: MPTCP on a four-plane P-Net, the scale of the P-Net paper's packet simulations.

686 hosts on four heterogeneous Jellyfish planes (98 switches of 7 network ports each per
plane, 7 hosts per rack, each host one 100 Gb/s NIC per plane), 1 us per hop, MTU 1,500 B,
a random permutation of 1 MB flows. MPTCP runs K subflows per plane (default 4, the paper's
best "4-way KSP") on distinct equal-cost minimal paths with Linked Increases. The baseline,
from the same run, is the same permutation as single-path TCP flows hashed over the planes.
Target: the MPTCP simulation in at most 120 CPU-seconds.

    python benchmarks/sim_pnet_jellyfish.py [--seed N] [--subflows-per-plane K] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

import numpy as np

from fatpaths_cfg.sim import SimConfig, SimResult, make_workload, simulate
from fatpaths_cfg.sim.network import network_from_topology

TARGET_CPU_SECONDS = 120.0


def figures(result: SimResult) -> dict[str, object]:
    c = result.counters
    fct_us = result.fct_ps() / 1e6
    return {
        "flows_finished": int(result.finished.sum()),
        "cpu_seconds": round(result.cpu_seconds, 2),
        "wall_seconds": round(result.wall_seconds, 2),
        "events": c["events"],
        "events_per_cpu_second": round(c["events"] / max(result.cpu_seconds, 1e-9)),
        "data_packets": c["data_packets_sent"],
        "timeouts": c["timeouts"],
        "fct_median_us": round(float(np.nanmedian(fct_us)), 2),
        "fct_p99_us": round(float(np.nanpercentile(fct_us, 99)), 2),
        "simulated_us": round(c["now_ps"] / 1e6, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--subflows-per-plane", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    network = network_from_topology(
        "jellyfish",
        {"nr": 98, "k": 7, "p": 7},
        seed=args.seed,
        link_gbps=100.0,
        planes=4,
        heterogeneous=True,
    )
    build_seconds = time.perf_counter() - started
    workload = make_workload(network, "permutation", 1_000_000, seed=args.seed)
    common = {"mtu": 1500, "seed": args.seed, "min_rto_us": 10_000.0}
    mptcp = simulate(
        network,
        workload,
        SimConfig(transport="mptcp", subflows_per_plane=args.subflows_per_plane, **common),
    )
    tcp = simulate(
        network,
        workload,
        SimConfig(transport="tcp", load_balancing="ecmp", plane_choice="hash", **common),
    )
    out = {
        "hosts": network.n_hosts,
        "planes": network.planes,
        "switches": network.n_switches,
        "flows": workload.n_flows,
        "network_build_seconds": round(build_seconds, 2),
        "mptcp": figures(mptcp),
        "baseline_single_path_tcp": figures(tcp),
        "target_cpu_seconds": TARGET_CPU_SECONDS,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:>26}: {value}")
    ok = mptcp.cpu_seconds <= TARGET_CPU_SECONDS and int(mptcp.finished.sum()) == workload.n_flows
    print("target met" if ok else "TARGET MISSED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
