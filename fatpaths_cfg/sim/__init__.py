"""Packet-level simulation of compiled fabrics (`fatpaths simulate`).

The discrete-event core is native (`fatpaths_cfg._native.PacketSimulator`); this package builds
its inputs from a compiled output directory and a workload, and turns its outputs into
`flows.csv`, `summary.json` and plots.

    network = load_network("out/sf5")
    workload = make_workload(network, "permutation", "2MB", seed=1)
    result = simulate(network, workload, SimConfig(transport="ndp", load_balancing="fatpaths"))
    print(result.summary()["fct"])
"""

from typing import TYPE_CHECKING

from .network import (
    NetworkLoadError,
    SimNetwork,
    load_network,
    network_from_edges,
    network_from_topology,
    network_of,
)
from .results import SimResult
from .run import LOAD_BALANCING, TRANSPORTS, SimConfig, simulate
from .workloads import PATTERNS, Workload, WorkloadError, make_workload

if TYPE_CHECKING:
    from .htsim import read_connection_matrix, write_connection_matrix


def __getattr__(name: str) -> object:
    # htsim's matrix format (and what it imports) loads on first use: a run that reads no
    # matrix does not pay for it at start-up.
    if name in ("read_connection_matrix", "write_connection_matrix"):
        from . import htsim

        return getattr(htsim, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LOAD_BALANCING",
    "PATTERNS",
    "TRANSPORTS",
    "NetworkLoadError",
    "SimConfig",
    "SimNetwork",
    "SimResult",
    "Workload",
    "WorkloadError",
    "load_network",
    "make_workload",
    "network_from_edges",
    "network_from_topology",
    "network_of",
    "read_connection_matrix",
    "simulate",
    "write_connection_matrix",
]
