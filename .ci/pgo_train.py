"""The run a profile-guided build of the native module learns from (`.ci/pgo_build.py` runs it
with an instrumented module): where the branches go and which code is hot.

Weighted like use: most of its time is the simulator's event loop on the fat-tree benchmark's
headline scenario (k=16, a permutation of 2 MB flows, NDP, spraying), then smaller runs of every
transport, load-balancing and routing scheme, lossless queues and two planes, and the compiler's
and checker's native paths on two example inventories. Code no run reaches is compiled as before,
without a profile's guidance.

    python .ci/pgo_train.py      (from the checkout's root, the package installed)
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from fatpaths_cfg.sim import SimConfig, Workload, make_workload, network_from_topology, simulate
from fatpaths_cfg.sim.network import network_from_edges, sampled_layers

ROOT = Path(__file__).resolve().parent.parent


def headline() -> None:
    """The benchmark's own scenario, from the benchmark itself (benchmarks/sim_fattree_perm.py)."""
    spec = importlib.util.spec_from_file_location(
        "bench", ROOT / "benchmarks" / "sim_fattree_perm.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    net = bench.fat_tree(1)
    simulate(net, bench.permutation(net, 1), bench.ndp_config(1))


def variety() -> None:
    """Every transport, scheme and queue kind, on small fabrics."""
    ft = network_from_topology("fattree", {"k": 8}, seed=1, link_gbps=100.0)
    sf = network_from_topology("slimfly", {"q": 5}, seed=1, link_gbps=100.0)
    links = np.stack([sf.link_a, sf.link_b], 1)
    hosts = np.bincount(sf.host_switch, minlength=sf.n_switches)
    layers = sampled_layers(sf, 3, 0.6, 1)
    sfl = network_from_edges("sf-layers", sf.n_switches, links, hosts, extra_layers=layers, seed=1)
    planes = network_from_topology("fattree", {"k": 4}, seed=1, link_gbps=100.0, planes=2)
    cases = [
        (ft, "permutation", dict(transport="tcp", load_balancing="ecmp")),
        (ft, "uniform", dict(transport="dctcp", load_balancing="letflow")),
        (ft, "permutation", dict(transport="tcp", load_balancing="single-path")),
        (sfl, "permutation", dict(transport="ndp", load_balancing="fatpaths")),
        (sfl, "uniform", dict(transport="tcp", load_balancing="fatpaths")),
        (sfl, "permutation", dict(transport="mptcp", load_balancing="fatpaths")),
        (sf, "permutation", dict(transport="ndp", routing="ugal-l", lossless=True)),
        (sf, "uniform", dict(transport="tcp", routing="min")),
        (sf, "permutation", dict(transport="tcp", routing="adaptive")),
        (planes, "permutation", dict(transport="mptcp", load_balancing="ecmp")),
    ]
    for net, pattern, options in cases:
        flows = make_workload(net, pattern, "200KB", seed=2)
        simulate(net, flows, SimConfig(seed=3, **options))
    # Many senders into one host: full queues, trimming and retransmissions.
    senders = np.arange(1, 33, dtype=np.int32)
    incast = Workload(
        src=senders,
        dst=np.zeros_like(senders),
        size=np.full(len(senders), 500_000, dtype=np.int64),
        start_ps=np.zeros(len(senders), dtype=np.int64),
    )
    for transport in ("ndp", "tcp"):
        simulate(ft, incast, SimConfig(transport=transport, seed=1))


def compiler() -> None:
    """`compile` and `verify` of two examples: the layers, tables and checks in native code."""
    fatpaths = [sys.executable, "-m", "fatpaths_cfg.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("slimfly-q5", "jellyfish-30"):
            out = str(Path(tmp) / name)
            inventory = str(ROOT / "inventories" / f"{name}.yaml")
            for command in (["compile", inventory, "-o", out], ["verify", out]):
                subprocess.run([*fatpaths, *command], check=True, capture_output=True)


if __name__ == "__main__":
    headline()
    variety()
    compiler()
