"""Simulator networks shared by several test modules."""

from __future__ import annotations

from fatpaths_cfg.sim import SimNetwork
from fatpaths_cfg.sim.network import network_from_edges, sampled_layers


def slimfly_q7_layered() -> SimNetwork:
    """Slim Fly q=7 (98 switches, 588 hosts) at 10 Gb/s with 1 full + 8 sparse layers (rho 0.5),
    as in FatPaths' evaluation."""
    from fatpaths_cfg.topologies import generate

    topo = generate("slimfly", {"q": 7}, 1)
    base = network_from_edges("sf7", topo.num_switches, topo.edges, topo.hosts_per_switch)
    return network_from_edges(
        "sf7",
        topo.num_switches,
        topo.edges,
        topo.hosts_per_switch,
        link_gbps=10.0,
        extra_layers=sampled_layers(base, 8, 0.5, 4),
    )
